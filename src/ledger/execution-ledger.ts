import { closingOutcomes, type ToolOutcome } from "../protocol/index.js";

/*
 * The execution ledger's contract, below both its users: the graph claims approved calls through
 * it, and the store implements it (SQLite, PostgreSQL). Neither may import the other for it.
 */

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
  /**
   * The run claiming it. Given, the claim is refused (`NOT_HOLDER`) unless that run still holds
   * the thread on this replica: a replica cut off from the database past its lease has had its
   * threads taken over, and must not run a call the survivor already answered "not executed".
   */
  runId?: string;
}

/** What a call claimed by a run that no longer holds its thread gets: it did not run. */
export const NOT_HOLDER: ToolOutcome = closingOutcomes.notHolder();

/** A key already claimed for other arguments is never a licence to skip (or repeat) a call. */
export const REUSED_CALL_ID: ToolOutcome = closingOutcomes.reusedCallId();

/**
 * The execution ledger, keyed by `thread_id:call_id`. `claim` must be atomic and durable before
 * the tool runs: that is what makes an approved call run at most once, ever.
 */
export interface ExecutionLedger {
  claim(key: string, entry: LedgerEntry): Promise<LedgerClaim>;
  /**
   * Records what the call did. Never rejects for a database that refuses the write: the tool has
   * had its effect, so the outcome is kept (and answered by `peek`) until the write is taken.
   */
  settle(key: string, outcome: ToolOutcome): Promise<void>;
  /** What is recorded for the key, without claiming it; undefined when it never started. */
  peek(key: string): Promise<Exclude<LedgerClaim, { kind: "claimed" }> | undefined>;
}
