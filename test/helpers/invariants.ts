/**
 * The rules no crash, full disk or held lock may break, checked against a restarted server and
 * its database: by the crash tests (test/e2e/kill-points.test.ts) and the torture script.
 */
import { TollgateClient } from "../../src/client/index.js";
import { TERMINAL_TYPES } from "../../src/protocol/index.js";
import { type FakeOpenAI, historyProblem } from "./fake-openai.js";
import type { TestDb } from "./sqlite.js";

export interface Violation {
  thread: string;
  rule: string;
  detail: string;
}

const terminal = new Set<string>(TERMINAL_TYPES);

/**
 * Checks every thread in the database. The model must answer a plain text turn to the probe
 * message each thread is sent (`probe` is its text): that probe is how "the history the next
 * model call sees" is observed, on the strict fake model.
 */
export async function checkInvariants(baseUrl: string, db: TestDb, model: FakeOpenAI, probe = "invariant probe"): Promise<Violation[]> {
  const out = checkDatabase(db);
  const client = new TollgateClient({ baseUrl, reconnect: { retries: 0 } });
  for (const { thread_id: id, status } of threadsOf(db)) {
    if (status === "waiting_human") await client.cancel(id);
    // What a person reads is what the model will be sent: GET shows no message the next run drops.
    const shown = (await client.getThread(id)).messages.map((m) => `${m.role}|${m.tool_call_id ?? ""}|${m.content}`);
    // The next model call: valid, and it sees every call the ledger says ran, with its result.
    const before = model.requests.length;
    const events = await client.run(id, probe).collect().catch((err: Error) => [{ type: "failed", message: err.message }]);
    const end = events.at(-1) as { type: string; code?: string; message?: string } | undefined;
    if (end?.type !== "done") out.push({ thread: id, rule: "usable", detail: `probe ended ${JSON.stringify(end)}` });
    const req = model.requests.slice(before).find((r) => r.messages.at(-1)?.content === probe);
    if (!req) continue;
    const problem = req.invalid ?? historyProblem(req.messages);
    if (problem) out.push({ thread: id, rule: "valid history", detail: problem });
    const sent = req.messages.map((m) => `${m.role}|${m.tool_call_id ?? ""}|${typeof m.content === "string" ? m.content : ""}`);
    for (const m of shown) {
      if (!sent.some((s) => sameModuloMask(m, s))) out.push({ thread: id, rule: "GET is what the model sees", detail: `shown but not sent: ${m.slice(0, 120)}` });
    }
    const seen = new Map<string, string>();
    for (const m of req.messages) if (m.role === "tool") seen.set(m.tool_call_id, String(m.content));
    const ledger = db.prepare("SELECT call_id, status, outcome FROM ledger WHERE thread_id = ?").all(id) as Array<{
      call_id: string;
      status: string;
      outcome: string | null;
    }>;
    for (const l of ledger) {
      const want = l.status === "settled" && l.outcome ? toolText(JSON.parse(l.outcome)) : "Error: outcome unknown";
      const got = seen.get(l.call_id);
      if (got !== want) out.push({ thread: id, rule: "ledger in history", detail: `${l.call_id}: ledger says ${JSON.stringify(want)}, model saw ${JSON.stringify(got)}` });
    }
  }
  return out;
}

/**
 * Whether `shown` is `sent` with sensitive values masked: each `"***"` in what a person reads
 * stands for one real JSON string value in what the model is sent (see *Hostile clients*).
 */
function sameModuloMask(shown: string, sent: string): boolean {
  if (shown === sent) return true;
  if (!shown.includes('"***"')) return false;
  const pattern = shown.split('"***"').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join('"(?:[^"\\\\]|\\\\.)*"');
  return new RegExp(`^${pattern}$`).test(sent);
}

/**
 * The rules the database alone can tell, without a model call: nothing ran twice or without an
 * approval naming it, no thread left running, every run closed with exactly one terminal event.
 */
export function checkDatabase(db: TestDb): Violation[] {
  const out: Violation[] = [];
  const approved = new Set<string>();
  for (const r of db.prepare("SELECT decisions FROM interrupts WHERE decisions IS NOT NULL").all() as Array<{ decisions: string }>) {
    for (const d of JSON.parse(r.decisions) as Array<{ call_id: string; approved: boolean }>) if (d.approved) approved.add(d.call_id);
  }
  for (const r of db.prepare("SELECT call_id, count(*) AS n FROM refunds GROUP BY call_id").all() as Array<{ call_id: string; n: number }>) {
    if (r.n > 1) out.push({ thread: "-", rule: "runs at most once", detail: `refund ${r.call_id} ran ${r.n} times` });
    if (!approved.has(r.call_id)) out.push({ thread: "-", rule: "gate", detail: `refund ${r.call_id} ran without an approval` });
  }
  for (const { thread_id: id, status } of threadsOf(db)) {
    if (status === "running") out.push({ thread: id, rule: "never stuck", detail: "left running after restart" });
    out.push(...checkRuns(db, id));
  }
  return out;
}

function threadsOf(db: TestDb) {
  return db.prepare("SELECT thread_id, status FROM threads ORDER BY thread_id").all() as Array<{ thread_id: string; status: string }>;
}

/** Every run row is closed, and every kept log ends with exactly one terminal event. */
function checkRuns(db: TestDb, threadId: string): Violation[] {
  const out: Violation[] = [];
  const runs = db.prepare("SELECT run_id, ended_at FROM runs WHERE thread_id = ?").all(threadId) as Array<{ run_id: string; ended_at: number | null }>;
  for (const r of runs) {
    if (r.ended_at === null) out.push({ thread: threadId, rule: "run closed", detail: `run ${r.run_id} never closed` });
    const rows = db.prepare("SELECT first_seq, frames FROM run_event_batches WHERE run_id = ? ORDER BY first_seq").all(r.run_id) as Array<{
      first_seq: number;
      frames: string;
    }>;
    if (rows.length === 0) continue; // pruned (older than EVENT_RETENTION_RUNS)
    const types = rows.flatMap((row) => row.frames.split("\n").map((line) => line.slice(0, line.indexOf("\t"))));
    const ends = types.filter((t) => terminal.has(t)).length;
    if (ends !== 1 || !terminal.has(types.at(-1)!)) {
      out.push({ thread: threadId, rule: "one terminal event", detail: `run ${r.run_id}: ${ends} terminal events, last ${types.at(-1)}` });
    }
  }
  return out;
}

/** The tool message text tollgate writes for an outcome (graphs/tool-messages.ts). */
function toolText(o: { status: string; output?: string; error?: string }): string {
  if (o.status === "ok") return o.output ?? "";
  if (o.status === "error") return `Error: ${o.error ?? "unknown error"}`;
  if (o.status === "invalid_args") return `Invalid arguments: ${o.error ?? ""}`;
  return o.error ?? o.status;
}
