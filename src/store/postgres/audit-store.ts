import { randomBytes } from "node:crypto";
import { AUDIT_KEY_NAME, type AuditRow, keyedHash, rowsForEachCall, trailEntry } from "../audit-records.js";
import type { AuditRecord, AuditStore, AuditTrailEntry, InterruptRecord } from "../types.js";
import type { Queryable } from "./queryable.js";
import { type Clock, systemClock } from "../../clock.js";

const COLUMNS = 15;

/**
 * The audit trail in PostgreSQL: append-only rows (triggers refuse updates, deletes and
 * truncation), written in the same transaction as the decision they record. Arguments are kept
 * only as HMACs under a key made once per database and shared by every replica.
 */
export class PgAuditStore implements AuditStore {
  /** `key`: the database's audit key, as `create` loads it. */
  constructor(
    private readonly q: Queryable,
    private readonly key: Buffer,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * The store with the database's key, made on first use. Insert-if-absent then read: replicas
   * starting together each propose a key, one insert wins, and all of them read that one.
   */
  static async create(q: Queryable, clock: Clock = systemClock): Promise<PgAuditStore> {
    const read = async () =>
      (await q.query<{ value: string }>("SELECT value FROM tollgate_meta WHERE key = $1", [AUDIT_KEY_NAME])).rows[0]?.value;
    let stored = await read(); // a write only the first time
    if (stored === undefined) {
      await q.query("INSERT INTO tollgate_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [
        AUDIT_KEY_NAME,
        randomBytes(32).toString("base64"),
      ]);
      stored = (await read())!;
    }
    return new PgAuditStore(q, Buffer.from(stored, "base64"), clock);
  }

  /** The same store (same key) running its SQL on `q`: a transaction's client. */
  on(q: Queryable): PgAuditStore {
    return new PgAuditStore(q, this.key, this.clock);
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (!records.length) return;
    // One statement, so the rows go in together even outside a transaction; ids follow their order.
    const values: unknown[] = [];
    const tuples = records.map((r, i) => {
      values.push(
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
      return `(${Array.from({ length: COLUMNS }, (_, j) => `$${i * COLUMNS + j + 1}`).join(", ")})`;
    });
    await this.q.query(
      `INSERT INTO audit (thread_id, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at, preview_hash, version, via, channel_user)
       VALUES ${tuples.join(", ")}`,
      values,
    );
  }

  appendForEachCall(record: InterruptRecord, how: Pick<AuditRecord, "decision" | "by" | "reason">, at = this.clock.now()): Promise<void> {
    return this.append(rowsForEachCall(record, how, at));
  }

  async list(threadId: string): Promise<AuditTrailEntry[]> {
    // As in SQLite: execution comes from the ledger, matched on the arguments that were to run, and
    // only for a call's last row in its interrupt (a decision that was voided and made again).
    const { rows } = await this.q.query<AuditRow>(
      `SELECT a.interrupt_id, a.call_id, a.tool, a.args_hash, a.edited_args_hash, a.preview_hash, a.version, a.decision, a.by_sub, a.reason, a.at, a.via, a.channel_user,
              l.status AS ledger_status, l.outcome AS ledger_outcome, l.started_at, l.settled_at
       FROM audit a LEFT JOIN ledger l
         ON a.run_args_hash IS NOT NULL AND l.key = a.thread_id || ':' || a.call_id AND l.args_hash = a.run_args_hash
            AND a.id = (SELECT MAX(b.id) FROM audit b
                        WHERE b.thread_id = a.thread_id AND b.interrupt_id = a.interrupt_id AND b.call_id = a.call_id)
       WHERE a.thread_id = $1 ORDER BY a.id`,
      [threadId],
    );
    return rows.map(trailEntry);
  }

  async decidedBy(threadId: string, sub: string): Promise<boolean> {
    const { rows } = await this.q.query("SELECT 1 FROM audit WHERE thread_id = $1 AND by_sub = $2 LIMIT 1", [threadId, sub]);
    return rows.length > 0;
  }

  hash(args: unknown): string {
    return keyedHash(this.key, args);
  }
}
