import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";

// The docs' walkthroughs, pasted into bash as written, against the demo model: each command block
// marked `<!-- NAME:start -->` … `<!-- NAME:end -->`, from the page that shows it.
// test/unit/readme-code.test.ts refuses a marked command block that this file does not run.
const COMMAND_BLOCKS = { walkthrough: "README.md", "four-eyes": "docs/guides/approval-policies.md" } as const;
const page = (name: keyof typeof COMMAND_BLOCKS) => fs.readFileSync(path.join(REPO_ROOT, COMMAND_BLOCKS[name]), "utf8");

function block(name: keyof typeof COMMAND_BLOCKS): string {
  const found = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`bash\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(page(name));
  if (!found) throw new Error(`${COMMAND_BLOCKS[name]} has no ${name} block`);
  return found[1]!;
}

const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
});

async function demoServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServer({ MODEL: undefined, OPENAI_API_KEY: undefined, DEMO_TOKEN_DELAY_MS: "0", ...env });
  servers.push(server);
  return server;
}

async function runBlock(name: keyof typeof COMMAND_BLOCKS, server: ServerProcess): Promise<string> {
  const script = block(name).replaceAll("localhost:8787", new URL(server.url).host);
  return (await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], { timeout: 20_000 })).stdout;
}

describe("the docs' walkthroughs", () => {
  it("with no auth: streams an interrupt, then the approved refund", async () => {
    const server = await demoServer();
    const stdout = await runBlock("walkthrough", server);
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

  it("with two tokens: the requester is refused, the approver approves with an edit, the audit says who", async () => {
    // The tokens exactly as the page starts the server with them.
    const tokens = /AUTH_TOKENS='([^']+)' npm start/.exec(page("four-eyes"))?.[1];
    expect(tokens, `${COMMAND_BLOCKS["four-eyes"]} shows how to start with AUTH_TOKENS`).toBeDefined();
    const server = await demoServer({ AUTH_TOKENS: tokens! });
    const stdout = await runBlock("four-eyes", server);
    expect(stdout).toContain("event: interrupt");
    expect(stdout).toMatch(/\{"error":\{"code":"forbidden"/);
    expect(stdout).toMatch(/"requested_by":"alice"/);
    expect(stdout).toMatch(/event: tool_result\n.*"edited":true/);
    expect(stdout).toMatch(/"decision":"edited","by":"ops"/);
    expect(stdout).toMatch(/"executed":\{"status":"ok"/);
    const db = openDb(server.dataDir);
    try {
      expect(db.rows("refunds")).toMatchObject([{ order_id: "A-1002", amount_cents: 250 }]);
    } finally {
      db.close();
    }
  });
});
