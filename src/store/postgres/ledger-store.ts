import { type LedgerClaim, type LedgerEntry, NOT_HOLDER, REUSED_CALL_ID } from "../../ledger/index.js";
import type { ToolOutcome } from "../../tools/index.js";
import { claimOfRow, type LedgerOptions, type LedgerRow, OutcomeWriter } from "../ledger-outcomes.js";
import { NO_SCRUB } from "../stored-secrets.js";
import type { LedgerStore } from "../types.js";
import { changedOne, type Queryable } from "./queryable.js";
import { type Clock, systemClock } from "../../clock.js";

/**
 * The execution ledger in PostgreSQL. The claim row is committed before the tool runs (an
 * autocommitted INSERT on the pool), so a call found `executing` after a crash is known to have
 * maybe run, and is never run again, by this replica or any other.
 */
export class PgLedger implements LedgerStore {
  private readonly outcomes: OutcomeWriter;
  private readonly replicaId: string;
  private readonly clock: Clock;

  constructor(
    private readonly q: Queryable,
    { replicaId, clock = systemClock, scrub = NO_SCRUB }: LedgerOptions,
  ) {
    this.replicaId = replicaId;
    this.clock = clock;
    this.outcomes = new OutcomeWriter(
      (key, stored) =>
        this.q.query("UPDATE ledger SET status = 'settled', outcome = $1, settled_at = $2 WHERE key = $3 AND status = 'executing'", [stored, this.clock.now(), key]),
      scrub,
    );
  }

  async claim(key: string, e: LedgerEntry): Promise<LedgerClaim> {
    // Of concurrent claims exactly one inserts; the others wait for its commit and insert nothing.
    // Fenced: with a run id, only while that run holds the thread on this replica. FOR SHARE: a
    // survivor's takeover of the thread waits for this claim's commit (and then finds it), instead
    // of passing it unseen and answering the call "not executed" while it runs.
    const r = await this.q.query(
      `INSERT INTO ledger (key, thread_id, call_id, name, args_hash, status, started_at)
       SELECT $1, $2, $3, $4, $5, 'executing', $6
       WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM threads
         WHERE thread_id = $2 AND status = 'running' AND holder_id = $7 AND replica_id = $8 FOR SHARE)
       ON CONFLICT (key) DO NOTHING`,
      [key, e.threadId, e.callId, e.name, e.argsHash, this.clock.now(), e.runId ?? null, this.replicaId],
    );
    if (changedOne(r)) return { kind: "claimed" };
    const existing = await this.row(key);
    if (!existing) return { kind: "settled", outcome: NOT_HOLDER };
    if (existing.args_hash !== e.argsHash) return { kind: "settled", outcome: REUSED_CALL_ID };
    return (await this.peek(key))!;
  }

  async peek(key: string): Promise<Exclude<LedgerClaim, { kind: "claimed" }> | undefined> {
    const known = this.outcomes.known(key);
    if (known) return { kind: "settled", outcome: known };
    return claimOfRow(await this.row(key));
  }

  settle(key: string, outcome: ToolOutcome): Promise<void> {
    return this.outcomes.settle(key, outcome);
  }

  private async row(key: string): Promise<LedgerRow | undefined> {
    const { rows } = await this.q.query<LedgerRow>("SELECT status, outcome, args_hash FROM ledger WHERE key = $1", [key]);
    return rows[0];
  }
}
