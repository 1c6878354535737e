import { createHmac, randomBytes } from "node:crypto";
import type { AuditDecision, AuditEntry, ToolStatus } from "../protocol/index.js";
import { canonicalJson } from "../tools/args-hash.js";
import type { Db } from "./database.js";
import type { InterruptCall, InterruptRecord } from "./interrupt-store.js";

/** One decision on one pending call, as the run engine records it. */
export interface AuditRecord {
  thread_id: string;
  interrupt_id: string;
  call_id: string;
  tool: string;
  /** Keyed hash (`hash`) of the call's arguments as the model asked for them. */
  args_hash: string;
  /** For an edit: keyed hash of the arguments the call runs with. */
  edited_args_hash?: string;
  decision: AuditDecision;
  /** The deciding principal; null for the system. */
  by: string | null;
  reason: string | null;
  /** The ledger's hash of the arguments the call runs with, for approved calls: joins its execution. */
  run_args_hash?: string;
  at: number;
}

interface Row {
  interrupt_id: string;
  call_id: string;
  tool: string;
  args_hash: string;
  edited_args_hash: string | null;
  decision: AuditDecision;
  by_sub: string | null;
  reason: string | null;
  at: number;
  ledger_status: "executing" | "settled" | null;
  ledger_outcome: string | null;
  started_at: number | null;
  settled_at: number | null;
}

const KEY_NAME = "audit_key";

/**
 * The audit trail: append-only rows (SQL triggers refuse updates and deletes), written in the same
 * transaction as the decision they record. Arguments are kept only as HMACs under a key made once
 * per database, so someone reading the trail cannot confirm a guess of a masked value.
 */
export class AuditStore {
  private readonly q;
  private readonly key: Buffer;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(
        `INSERT INTO audit (thread_id, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // Execution comes from the ledger when read, matched on the arguments that were to run (a
      // call id the model reused in a later turn must not borrow an earlier call's execution), and
      // only for a call's last row in its interrupt (a decision that was voided and made again).
      list: db.prepare<[string], Row>(
        `SELECT a.interrupt_id, a.call_id, a.tool, a.args_hash, a.edited_args_hash, a.decision, a.by_sub, a.reason, a.at,
                l.status AS ledger_status, l.outcome AS ledger_outcome, l.started_at, l.settled_at
         FROM audit a LEFT JOIN ledger l
           ON a.run_args_hash IS NOT NULL AND l.key = a.thread_id || ':' || a.call_id AND l.args_hash = a.run_args_hash
              AND a.id = (SELECT MAX(b.id) FROM audit b
                          WHERE b.thread_id = a.thread_id AND b.interrupt_id = a.interrupt_id AND b.call_id = a.call_id)
         WHERE a.thread_id = ? ORDER BY a.id`,
      ),
      decidedBy: db.prepare<[string, string], { one: number }>(
        "SELECT 1 AS one FROM audit WHERE thread_id = ? AND by_sub = ? LIMIT 1",
      ),
    };
    // Made once per database and kept, so hashes stay comparable across restarts. INSERT OR IGNORE
    // then read: two processes sharing the file agree on one key.
    const read = db.prepare<[string], { value: string }>("SELECT value FROM tollgate_meta WHERE key = ?");
    // A write only the first time: later starts must not need the write lock (Studio may hold it).
    let stored = read.get(KEY_NAME);
    if (!stored) {
      db.prepare("INSERT OR IGNORE INTO tollgate_meta (key, value) VALUES (?, ?)").run(KEY_NAME, randomBytes(32).toString("base64"));
      stored = read.get(KEY_NAME)!;
    }
    this.key = Buffer.from(stored.value, "base64");
  }

  /** Appends the rows; call inside the transaction that makes the decision. */
  append(records: readonly AuditRecord[]): void {
    for (const r of records) {
      this.q.insert.run(
        r.thread_id,
        r.interrupt_id,
        r.call_id,
        r.tool,
        r.args_hash,
        r.edited_args_hash ?? null,
        r.decision,
        r.by,
        r.reason,
        r.run_args_hash ?? null,
        r.at,
      );
    }
  }

  /** One row per pending call of `record`, all decided the same way (expiry, cancel, a voided decision). */
  appendForEachCall(record: InterruptRecord, how: Pick<AuditRecord, "decision" | "by" | "reason">, at = Date.now()): void {
    this.append(record.calls.map((call) => ({ ...callRow(record, call, how.by, at), decision: how.decision, reason: how.reason })));
  }

  /** The thread's trail, oldest first, each approved call joined with what the ledger knows. */
  list(threadId: string): AuditEntry[] {
    return this.q.list.all(threadId).map(toEntry);
  }

  /** Whether `sub` decided an interrupt of this thread (an approver keeps read access to it). */
  decidedBy(threadId: string, sub: string): boolean {
    return this.q.decidedBy.get(threadId, sub) !== undefined;
  }

  /** HMAC-SHA256 of canonical (sorted-key) JSON under this database's key. */
  hash(args: unknown): string {
    return createHmac("sha256", this.key).update(canonicalJson(args)).digest("hex");
  }
}

/** What every row about one pending call says: which call, with its keyed argument hash, by whom, when. */
export function callRow(record: Pick<InterruptRecord, "thread_id" | "interrupt_id">, call: InterruptCall, by: string | null, at: number) {
  return { thread_id: record.thread_id, interrupt_id: record.interrupt_id, call_id: call.call_id, tool: call.name, args_hash: call.audit_hash, by, at };
}

function toEntry(r: Row): AuditEntry {
  const entry: AuditEntry = {
    at: new Date(r.at).toISOString(),
    interrupt_id: r.interrupt_id,
    call_id: r.call_id,
    tool: r.tool,
    args_hash: r.args_hash,
    decision: r.decision,
    by: r.by_sub,
    reason: r.reason,
  };
  if (r.edited_args_hash) entry.edited_args_hash = r.edited_args_hash;
  if (r.ledger_status === "settled" && r.ledger_outcome) {
    const outcome = JSON.parse(r.ledger_outcome) as { status: ToolStatus };
    entry.executed = { status: outcome.status, at: new Date(r.settled_at ?? r.started_at!).toISOString() };
  } else if (r.ledger_status === "executing") {
    // Claimed and not settled: still running, or the process died while it ran.
    entry.executed = { status: "unknown", at: new Date(r.started_at!).toISOString() };
  }
  return entry;
}
