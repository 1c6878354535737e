import type { ToolOutcome } from "../tools/index.js";
import { type ExecutionLedger, type LedgerClaim, type LedgerEntry, REUSED_CALL_ID } from "./execution-ledger.js";

/** For graphs served without tollgate's store (LangGraph Studio): once per process. */
export class MemoryLedger implements ExecutionLedger {
  private readonly rows = new Map<string, { argsHash: string; outcome: ToolOutcome | null }>();

  async claim(key: string, entry: LedgerEntry): Promise<LedgerClaim> {
    const row = this.rows.get(key);
    if (!row) {
      this.rows.set(key, { argsHash: entry.argsHash, outcome: null });
      return { kind: "claimed" };
    }
    if (row.argsHash !== entry.argsHash) {
      return { kind: "settled", outcome: REUSED_CALL_ID };
    }
    return (await this.peek(key))!;
  }

  async settle(key: string, outcome: ToolOutcome): Promise<void> {
    const row = this.rows.get(key);
    if (row) row.outcome = outcome;
  }

  async peek(key: string): Promise<Exclude<LedgerClaim, { kind: "claimed" }> | undefined> {
    const row = this.rows.get(key);
    if (!row) return undefined;
    return row.outcome ? { kind: "settled", outcome: row.outcome } : { kind: "in_doubt" };
  }
}
