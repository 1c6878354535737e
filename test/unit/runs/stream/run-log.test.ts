import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { PASS_TOKENS } from "../../../../src/ops/index.js";
import { EventPersister } from "../../../../src/runs/stream/event-persister.js";
import { RunLog } from "../../../../src/runs/stream/run-log.js";
import { openSqliteStore, type SqliteStore } from "../../../../src/store/sqlite/index.js";

/** Every batch a listener gets until the log ends, as the texts of its events. */
async function batchesOf(log: RunLog): Promise<string[][]> {
  const out: string[][] = [];
  for await (const batch of log.follow(-1)) out.push(batch.map((e) => (JSON.parse(e.data) as { text?: string }).text ?? e.type));
  return out;
}

describe("RunLog listeners", () => {
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function newLog(): Promise<RunLog> {
    store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-runlog-")));
    return new RunLog("r", { persister: new EventPersister(store.runs, () => undefined), redactor: { event: (body) => body, tokenFilter: () => PASS_TOKENS } });
  }

  it("get a burst of tokens as one batch (one write), though each token came a few microtasks after the last", async () => {
    const log = await newLog();
    const got = batchesOf(log);
    // As a model's chunks reach the agent node: one socket read, then a promise hop per token.
    await new Promise<void>((r) => setImmediate(r));
    for (const text of ["a", "b", "c", "d", "e"]) {
      log.append({ type: "token", text });
      for (let hop = 0; hop < 4; hop++) await Promise.resolve();
    }
    // The next read: a later turn of the loop, a batch of its own.
    await new Promise<void>((r) => setImmediate(r));
    log.append({ type: "token", text: "f" });
    await new Promise<void>((r) => setImmediate(r));
    await log.end({ type: "done", outcome: "completed", message: "abcdef" }, () => Promise.resolve());
    expect(await got).toEqual([["a", "b", "c", "d", "e"], ["f"], ["done"]]);
  });

  it("keep a frame's string, not its chunk, once it was read: a run's frames outlive it (RecentFrames)", async () => {
    const log = await newLog();
    const gone = await (async () => {
      const chunk = { state: new Array(100_000).fill("x") };
      log.frame({ mode: "tasks", namespace: [], show: () => JSON.stringify(chunk.state.length) });
      const [frame] = log.keptFrames;
      expect(frame!.data).toBe("100000");
      return new WeakRef(chunk);
    })();
    // A WeakRef's target lives to the end of the job that made it: collect in a later one.
    await new Promise<void>((r) => setImmediate(r));
    v8.setFlagsFromString("--expose-gc");
    (vm.runInNewContext("gc") as () => void)();
    expect(gone.deref(), "the chunk is still held by its frame").toBeUndefined();
    expect(log.keptFrames[0]!.data).toBe("100000");
  });
});
