import { type LedgerClaim, type LedgerEntry, NOT_HOLDER, REUSED_CALL_ID } from "../../ledger/index.js";
import type { ToolOutcome } from "../../tools/index.js";
import { claimOfRow, type LedgerOptions, type LedgerRow, OutcomeWriter } from "../ledger-outcomes.js";
import { NO_SCRUB } from "../stored-secrets.js";
import type { LedgerStore } from "../types.js";
import type { SqliteConn } from "./sqlite-conn.js";
import { type Clock, systemClock } from "../../clock.js";

/**
 * The execution ledger in SQLite. The claim row is committed before the tool runs, so a call
 * found `executing` after a crash is known to have maybe run, and is never run again.
 */
export class SqliteLedger implements LedgerStore {
  private readonly q;
  private readonly outcomes: OutcomeWriter;
  private readonly replicaId: string;
  private readonly clock: Clock;

  constructor(
    private readonly conn: SqliteConn,
    { replicaId, clock = systemClock, scrub = NO_SCRUB }: LedgerOptions,
  ) {
    this.replicaId = replicaId;
    this.clock = clock;
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
      get: db.prepare<[string], LedgerRow>(
        "SELECT status, outcome, args_hash FROM ledger WHERE key = ?",
      ),
      settle: db.prepare(
        "UPDATE ledger SET status = 'settled', outcome = ?, settled_at = ? WHERE key = ? AND status = 'executing'",
      ),
    };
    const settle = this.q.settle;
    this.outcomes = new OutcomeWriter((key, stored) => conn.lock.gate(() => settle.run(stored, clock.now(), key)), scrub);
  }

  async claim(key: string, e: LedgerEntry): Promise<LedgerClaim> {
    const claimed = await this.conn.lock.gate(() => {
      const row = { key, thread: e.threadId, call: e.callId, name: e.name, hash: e.argsHash, now: this.clock.now(), run: e.runId ?? null, replica: this.replicaId };
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
    const known = this.outcomes.known(key);
    if (known) return { kind: "settled", outcome: known };
    return claimOfRow(await this.conn.lock.gate(() => this.q.get.get(key)));
  }

  settle(key: string, outcome: ToolOutcome): Promise<void> {
    return this.outcomes.settle(key, outcome);
  }
}
