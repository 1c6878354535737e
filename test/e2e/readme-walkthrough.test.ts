import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT, type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";

// The README's walkthrough, pasted into bash as written, against the demo model.
let server: ServerProcess;
beforeAll(async () => {
  server = await startServer({ MODEL: undefined, OPENAI_API_KEY: undefined, DEMO_TOKEN_DELAY_MS: "0" });
});
afterAll(async () => server?.kill());

function walkthrough(): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
  const block = /<!-- walkthrough:start -->\s*```bash\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme);
  if (!block) throw new Error("README has no walkthrough block");
  return block[1]!;
}

it("the README walkthrough streams an interrupt, then the approved refund", async () => {
  const script = walkthrough().replaceAll("localhost:8787", new URL(server.url).host);
  const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], { timeout: 20_000 });
  const interruptAt = stdout.indexOf("event: interrupt");
  expect(interruptAt).toBeGreaterThan(0);
  expect(stdout.indexOf('"status":"waiting_human"')).toBeGreaterThan(interruptAt);
  expect(stdout).toContain("event: done");
  expect(stdout).toContain('"message":"Done: refunded $5.00 on A-1002."');
  const db = openDb(server.dataDir);
  try {
    expect(db.rows("refunds")).toMatchObject([{ order_id: "A-1002", amount_cents: 500 }]);
  } finally {
    db.close();
  }
});
