import { randomBytes } from "node:crypto";
import { AUDIT_KEY_NAME, type AuditRow, keyedHash, rowsForEachCall, trailEntry } from "../audit-records.js";
import type { AuditRecord, AuditStore, AuditTrailEntry, InterruptRecord } from "../types.js";
import type { SqliteConn } from "./sqlite-conn.js";
import { type Clock, systemClock } from "../../clock.js";

/**
 * The audit trail in SQLite: append-only rows (SQL triggers refuse updates and deletes), written
 * in the same transaction as the decision they record. Arguments are kept only as HMACs under a
 * key made once per database, so someone reading the trail cannot confirm a guess of a masked value.
 */
export class SqliteAuditStore implements AuditStore {
  private readonly q;
  private readonly key: Buffer;

  constructor(
    private readonly conn: SqliteConn,
    private readonly clock: Clock = systemClock,
  ) {
    const { db } = conn;
    this.q = {
      insert: db.prepare(
        `INSERT INTO audit (thread_id, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at, preview_hash, version, via, channel_user)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // Execution comes from the ledger when read, matched on the arguments that were to run (a
      // call id the model reused in a later turn must not borrow an earlier call's execution), and
      // only for a call's last row in its interrupt (a decision that was voided and made again).
      list: db.prepare<[string], AuditRow>(
        `SELECT a.interrupt_id, a.call_id, a.tool, a.args_hash, a.edited_args_hash, a.preview_hash, a.version, a.decision, a.by_sub, a.reason, a.at, a.via, a.channel_user,
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
    let stored = read.get(AUDIT_KEY_NAME);
    if (!stored) {
      db.prepare("INSERT OR IGNORE INTO tollgate_meta (key, value) VALUES (?, ?)").run(AUDIT_KEY_NAME, randomBytes(32).toString("base64"));
      stored = read.get(AUDIT_KEY_NAME)!;
    }
    this.key = Buffer.from(stored.value, "base64");
  }

  /** Appends the rows; call inside the transaction that makes the decision. */
  async append(records: readonly AuditRecord[]): Promise<void> {
    await this.conn.lock.gate(() => {
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
          r.preview_hash ?? null,
          r.version ?? null,
          r.via ?? null,
          r.channel_user ?? null,
        );
      }
    });
  }

  appendForEachCall(record: InterruptRecord, how: Pick<AuditRecord, "decision" | "by" | "reason">, at = this.clock.now()): Promise<void> {
    return this.append(rowsForEachCall(record, how, at));
  }

  list(threadId: string): Promise<AuditTrailEntry[]> {
    return this.conn.lock.gate(() => this.q.list.all(threadId).map(trailEntry));
  }

  decidedBy(threadId: string, sub: string): Promise<boolean> {
    return this.conn.lock.gate(() => this.q.decidedBy.get(threadId, sub) !== undefined);
  }

  hash(args: unknown): string {
    return keyedHash(this.key, args);
  }
}
