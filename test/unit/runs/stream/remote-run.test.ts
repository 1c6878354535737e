import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { followStoredRun } from "../../../../src/runs/stream/remote-run.js";
import { type LoggedEvent, openSqliteStore, type SqliteStore } from "../../../../src/store/index.js";

// Following a run from its stored log, as a replica that is not running it does.

let store: SqliteStore | undefined;
afterEach(async () => store?.close());

const token = (seq: number): LoggedEvent => ({ seq, type: "token", data: JSON.stringify({ run_id: "r", text: `t${seq}` }) });
const done = (seq: number): LoggedEvent => ({ seq, type: "done", data: JSON.stringify({ run_id: "r", outcome: "completed", message: "" }) });

it("an end committed between reading the log and reading the run still reaches the follower", async () => {
  store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-follow-")));
  const s = store;
  await s.runs.start("r", "t", { kind: "message" });
  await s.runs.append("r", [token(0)]);
  // The run ends (terminal event and closed row, one transaction) right after the follower's
  // first read of the log finds nothing new.
  const read = s.runs.read.bind(s.runs);
  let reads = 0;
  s.runs.read = async (runId, afterSeq) => {
    const events = await read(runId, afterSeq);
    if (++reads === 2) {
      await s.transaction(async (tx) => {
        await tx.runs.append("r", [done(1)]);
        await tx.runs.end("r", "completed");
      });
    }
    return events;
  };
  const seen: number[] = [];
  for await (const batch of followStoredRun(s, "r", { afterSeq: -1 })) seen.push(...batch.map((e) => e.seq));
  expect(seen).toEqual([0, 1]);
});
