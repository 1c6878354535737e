import { type ExecutionLedger, type LedgerClaim, type LedgerEntry, REUSED_CALL_ID } from "../../graphs/execution-ledger.js";
import type { ToolOutcome } from "../tools/index.js";
import type { Db } from "./database.js";

/**
 * The execution ledger in SQLite. The claim row is committed before the tool runs, so a call
 * found `executing` after a crash is known to have maybe run, and is never run again.
 */
export class SqliteLedger implements ExecutionLedger {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      claim: db.prepare(
        "INSERT INTO ledger (key, thread_id, call_id, name, args_hash, status, started_at) VALUES (?, ?, ?, ?, ?, 'executing', ?) ON CONFLICT(key) DO NOTHING",
      ),
      get: db.prepare<[string], { status: "executing" | "settled"; outcome: string | null; args_hash: string }>(
        "SELECT status, outcome, args_hash FROM ledger WHERE key = ?",
      ),
      settle: db.prepare(
        "UPDATE ledger SET status = 'settled', outcome = ?, settled_at = ? WHERE key = ? AND status = 'executing'",
      ),
    };
  }

  claim(key: string, e: LedgerEntry): LedgerClaim {
    if (this.q.claim.run(key, e.threadId, e.callId, e.name, e.argsHash, Date.now()).changes === 1) {
      return { kind: "claimed" };
    }
    if (this.q.get.get(key)!.args_hash !== e.argsHash) return { kind: "settled", outcome: REUSED_CALL_ID };
    return this.peek(key)!;
  }

  peek(key: string): Exclude<LedgerClaim, { kind: "claimed" }> | undefined {
    const row = this.q.get.get(key);
    if (!row) return undefined;
    if (row.status === "settled" && row.outcome) return { kind: "settled", outcome: JSON.parse(row.outcome) as ToolOutcome };
    return { kind: "in_doubt" };
  }

  settle(key: string, outcome: ToolOutcome): void {
    this.q.settle.run(JSON.stringify(outcome), Date.now(), key);
  }
}
