import { type LedgerClaim, type LedgerEntry, NOT_HOLDER, REUSED_CALL_ID } from "../../../graphs/execution-ledger.js";
import type { ToolOutcome } from "../../tools/index.js";
import { isStorageFault } from "../storage-fault.js";
import type { LedgerStore } from "../types.js";
import type { SqliteConn } from "./sqlite-conn.js";

const RETRY_MS = 250;

/**
 * The execution ledger in SQLite. The claim row is committed before the tool runs, so a call
 * found `executing` after a crash is known to have maybe run, and is never run again.
 */
export class SqliteLedger implements LedgerStore {
  private readonly q;
  /** Outcomes the database refused to record; retried, and answered from here meanwhile. */
  private readonly unsettled = new Map<string, ToolOutcome>();
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly conn: SqliteConn,
    private readonly replicaId: string,
  ) {
    const { db } = conn;
    this.q = {
      // Fenced: with a run id, only while that run holds the thread on this replica.
      claim: db.prepare(
        `INSERT INTO ledger (key, thread_id, call_id, name, args_hash, status, started_at)
         SELECT @key, @thread, @call, @name, @hash, 'executing', @now
         WHERE @run IS NULL OR EXISTS (SELECT 1 FROM threads
           WHERE thread_id = @thread AND status = 'running' AND holder_id = @run AND replica_id IS @replica)
         ON CONFLICT(key) DO NOTHING`,
      ),
      get: db.prepare<[string], { status: "executing" | "settled"; outcome: string | null; args_hash: string }>(
        "SELECT status, outcome, args_hash FROM ledger WHERE key = ?",
      ),
      settle: db.prepare(
        "UPDATE ledger SET status = 'settled', outcome = ?, settled_at = ? WHERE key = ? AND status = 'executing'",
      ),
    };
  }

  async claim(key: string, e: LedgerEntry): Promise<LedgerClaim> {
    const claimed = await this.conn.lock.gate(() => {
      const row = { key, thread: e.threadId, call: e.callId, name: e.name, hash: e.argsHash, now: Date.now(), run: e.runId ?? null, replica: this.replicaId };
      if (this.q.claim.run(row).changes === 1) return true;
      const existing = this.q.get.get(key);
      if (!existing) return "not_holder";
      return existing.args_hash === e.argsHash ? false : "reused";
    });
    if (claimed === true) return { kind: "claimed" };
    if (claimed === "reused") return { kind: "settled", outcome: REUSED_CALL_ID };
    if (claimed === "not_holder") return { kind: "settled", outcome: NOT_HOLDER };
    return (await this.peek(key))!;
  }

  async peek(key: string): Promise<Exclude<LedgerClaim, { kind: "claimed" }> | undefined> {
    const known = this.unsettled.get(key);
    if (known) return { kind: "settled", outcome: known };
    const row = await this.conn.lock.gate(() => this.q.get.get(key));
    if (!row) return undefined;
    if (row.status === "settled" && row.outcome) return { kind: "settled", outcome: JSON.parse(row.outcome) as ToolOutcome };
    return { kind: "in_doubt" };
  }

  /**
   * Records what the call did. The tool has already had its effect, so a refused write must not
   * lose it: the outcome is kept in memory (and answered from there) and written once the
   * database takes writes again. Only a crash before then leaves the call "outcome unknown".
   */
  async settle(key: string, outcome: ToolOutcome): Promise<void> {
    // Answered from memory at once, so a peek while the write waits for the lock sees it.
    this.unsettled.set(key, outcome);
    try {
      await this.conn.lock.gate(() => this.q.settle.run(JSON.stringify(outcome), Date.now(), key));
    } catch (err) {
      if (!isStorageFault(err)) throw err;
      this.retry ??= setTimeout(() => this.retrySettles(), RETRY_MS);
      this.retry.unref();
      return;
    }
    this.unsettled.delete(key);
  }

  private retrySettles(): void {
    this.retry = undefined;
    for (const [key, outcome] of [...this.unsettled]) this.settle(key, outcome).catch(() => undefined); // kept: tried again later
  }
}
