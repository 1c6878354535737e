import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../src/config.js";
import { silentLogger } from "../../../../src/logger.js";
import { createTollgate, type Tollgate } from "../../../../src/index.js";

// In-process, through app.request(): no socket needed to check the bytes of a stream.
let tg: Tollgate | undefined;
afterEach(async () => {
  await tg?.close();
  tg = undefined;
});

async function open(env: Record<string, string>): Promise<Tollgate> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-sse-"));
  tg = await createTollgate({ config: loadConfig({ DATA_DIR: dataDir, ...env }), log: silentLogger });
  return tg;
}

const post = (t: Tollgate, url: string, body: unknown) =>
  t.app.request(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("SSE bytes", () => {
  it("frames every event as id/event/data lines, numbered from 0, with the run id", async () => {
    const t = await open({ DEMO_TOKEN_DELAY_MS: "0" });
    const res = await post(t, "/threads/bytes/runs", { message: "hello" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const runId = res.headers.get("x-run-id")!;
    const text = (await res.text()).replaceAll(runId, "RUN");
    expect(text.startsWith('id: RUN:0\nevent: token\ndata: {"run_id":"RUN","text":"I\'m"}\n\nid: RUN:1\nevent: token\n')).toBe(true);
    const frames = text.split("\n\n").filter(Boolean);
    expect(frames.at(-1)).toBe(
      `id: RUN:${frames.length - 1}\nevent: done\ndata: {"run_id":"RUN","outcome":"completed","message":${JSON.stringify(
        "I'm the tollgate demo agent. I can look up orders A-1001 to A-1005, refund them and email customers. " +
          'Try "where is A-1001", "refund order A-1002 5 dollars" or "email the customer of A-1003 that it ships tomorrow".',
      )}}`,
    );
    frames.forEach((f, i) => expect(f.startsWith(`id: RUN:${i}\n`)).toBe(true));
  });

  it("sends heartbeat comments every HEARTBEAT_SECONDS while a stream is idle", async () => {
    const t = await open({ DEMO_TOKEN_DELAY_MS: "40", HEARTBEAT_SECONDS: "0.01" });
    const text = await (await post(t, "/threads/beat/runs", { message: "hello" })).text();
    expect(text).toContain(": ping\n\n");
    // comments sit between frames, never inside one
    for (const block of text.split("\n\n").filter(Boolean)) {
      expect(block === ": ping" || /^id: .+\nevent: \w+\ndata: \{.*\}$/.test(block), block).toBe(true);
    }
  });
});

describe("run event log", () => {
  it("keeps the logs of the EVENT_RETENTION_RUNS latest runs per thread", async () => {
    const t = await open({ DEMO_TOKEN_DELAY_MS: "0", EVENT_RETENTION_RUNS: "2" });
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post(t, "/threads/keep/runs", { message: "hello" });
      runIds.push(res.headers.get("x-run-id")!);
      await res.text();
    }
    expect(await Promise.all(runIds.map(async (id) => (await t.store.runs.read(id, -1)).length > 0))).toEqual([false, true, true]);
  });
});
