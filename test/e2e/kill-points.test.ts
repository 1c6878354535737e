import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { orderScript } from "../helpers/order-script.js";
import { checkInvariants } from "../helpers/invariants.js";
import { startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { expectNoStackTraces } from "./support.js";

// kill -9 at exact points between the writes of a run (test/helpers/kill-point.mjs), then a
// restart: whatever the point, nothing runs twice or without approval, every call the ledger says
// ran is in the history the next model call sees (on a strict model), every run's log ends with
// exactly one terminal event, and the thread takes the next message.

let model: FakeOpenAI;
beforeAll(async () => {
  model = await startFakeOpenAI({ script: orderScript });
});
afterAll(() => model.close());

const env = () => ({ MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url, TOLLGATE_TEST_TOOLS: "1" });

interface Case {
  /** `resume`: killed while an approved refund goes through; `message`: killed during a new message. */
  scenario: "resume" | "message";
  point: string;
  nth?: number;
  /** What this point proves. */
  why: string;
}

const CASES: Case[] = [
  { scenario: "resume", point: "ledger-claim:after", why: "claimed, tool not started: 'outcome unknown', never re-run" },
  { scenario: "resume", point: "ledger-settle:after", why: "the refund ran and is settled, its step's writes are not: the result stays in the history" },
  { scenario: "resume", point: "writes:after", why: "call_tool's output is a pending write with no checkpoint: committed, not dropped" },
  { scenario: "resume", point: "checkpoint:after", why: "call_tool's checkpoint is written, the next model call is not made" },
  { scenario: "resume", point: "events:after", nth: 2, why: "mid-answer, tokens in the log: one terminal after them" },
  { scenario: "resume", point: "terminal:before", why: "the answer is complete, its end not written: the run still closes once" },
  { scenario: "resume", point: "terminal:after", why: "the end, thread release and run row are one commit: nothing left to recover" },
  { scenario: "message", point: "writes:after", nth: 1, why: "the model's answer is a pending write: committed, its calls answered" },
  { scenario: "message", point: "writes:after", nth: 2, why: "the lookup's result is a pending write: committed" },
  { scenario: "message", point: "checkpoint:before", nth: 2, why: "before the first step's checkpoint" },
  { scenario: "message", point: "interrupt:before", why: "stopping at the gate, the interrupt not yet open: closed as error, nothing runs" },
  { scenario: "message", point: "release:after", why: "the interrupt is open: it survives and can still be approved" },
];

describe("kill -9 at each write of a run, then restart", () => {
  for (const c of CASES) {
    it(`${c.scenario} killed at ${c.point}${c.nth ? ` #${c.nth}` : ""}: ${c.why}`, async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-kill-"));
      const thread = "killed";
      try {
        if (c.scenario === "resume") {
          const a = await startServer(env(), { dataDir });
          const events = await new TollgateClient({ baseUrl: a.url }).run(thread, "refund A-1001 5 cents").collect();
          expect(events.at(-1)?.type).toBe("interrupt");
          await a.kill();
        }
        const doomed = await startServer({ ...env(), TOLLGATE_KILL_AT: c.point, TOLLGATE_KILL_NTH: String(c.nth ?? 1) }, { dataDir });
        const client = new TollgateClient({ baseUrl: doomed.url, reconnect: { retries: 0 } });
        const work =
          c.scenario === "resume"
            ? client.getThread(thread).then((v) =>
                client.resume(thread, v.pending!.interrupt_id, { decisions: v.pending!.calls.map((p) => ({ call_id: p.call_id, approved: true })) }).collect(),
              )
            : client.run(thread, "refund A-1001 5 cents").collect();
        await work.catch(() => undefined); // the connection dies with the server
        expect((await doomed.exited).signal, "the server died at the kill point").toBe("SIGKILL");

        const after = await startServer(env(), { dataDir });
        const db = openDb(dataDir);
        try {
          // The interrupt that the last case leaves open can still be approved, and runs once.
          if (c.point === "release:after") {
            const c2 = new TollgateClient({ baseUrl: after.url });
            const v = await c2.getThread(thread);
            expect(v.status).toBe("waiting_human");
            const rest = await c2.resume(thread, v.pending!.interrupt_id, { decisions: v.pending!.calls.map((p) => ({ call_id: p.call_id, approved: true })) }).collect();
            expect(rest.at(-1)?.type).toBe("done");
            expect(db.countRows("refunds")).toBe(1);
          }
          expect(await checkInvariants(after.url, db, model)).toEqual([]);
          expectNoStackTraces(after);
        } finally {
          db.close();
          await after.kill();
        }
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
