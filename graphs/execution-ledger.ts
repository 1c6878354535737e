import type { ToolOutcome } from "../src/tools/index.js";

/** What a claim on an approved call found. */
export type LedgerClaim =
  | { kind: "claimed" }
  /** Ran before: its recorded outcome stands, the tool is not called again. */
  | { kind: "settled"; outcome: ToolOutcome }
  /** Was running when the process died: it may or may not have had its effect. */
  | { kind: "in_doubt" };

export interface LedgerEntry {
  threadId: string;
  callId: string;
  name: string;
  argsHash: string;
}

/**
 * The execution ledger, keyed by `thread_id:call_id`. `claim` must be atomic and durable before
 * the tool runs: that is what makes an approved call run at most once, ever.
 */
export interface ExecutionLedger {
  claim(key: string, entry: LedgerEntry): LedgerClaim;
  settle(key: string, outcome: ToolOutcome): void;
  /** What is recorded for the key, without claiming it; undefined when it never started. */
  peek(key: string): Exclude<LedgerClaim, { kind: "claimed" }> | undefined;
}

/** For graphs served without tollgate's store (LangGraph Studio): once per process. */
export class MemoryLedger implements ExecutionLedger {
  private readonly rows = new Map<string, ToolOutcome | null>();

  claim(key: string): LedgerClaim {
    if (!this.rows.has(key)) {
      this.rows.set(key, null);
      return { kind: "claimed" };
    }
    const outcome = this.rows.get(key);
    return outcome ? { kind: "settled", outcome } : { kind: "in_doubt" };
  }

  settle(key: string, outcome: ToolOutcome): void {
    this.rows.set(key, outcome);
  }

  peek(key: string): Exclude<LedgerClaim, { kind: "claimed" }> | undefined {
    if (!this.rows.has(key)) return undefined;
    const outcome = this.rows.get(key);
    return outcome ? { kind: "settled", outcome } : { kind: "in_doubt" };
  }
}
