import type { ApprovalPolicy, Quorum } from "../../protocol/index.js";

/*
 * Where the calls of an interrupt decided call by call stand while it waits. Kept as the
 * interrupt's `progress` (JSON) by compare-and-set; the gate's reducer makes the next one.
 */

/**
 * A call edited while its interrupt waits (decided call by call): what it now is. Earlier
 * approvals went with the edit; the call shows these arguments, policy and preview from then on.
 */
export interface CallEdit {
  /**
   * The keys the editor replaced, as people see them: sensitive values masked. When it masked
   * any, the real ones are in `sealed_args`, sealed with a key the database does not hold.
   */
  edited_args: Record<string, unknown>;
  /** The keys as sent, sealed; absent when none of them is sensitive (`edited_args` is then as sent). */
  sealed_args?: string;
  changed: string[];
  /** Plain hash of the merged arguments (the ledger's), and their keyed hash (the audit's). */
  run_args_hash: string;
  edited_args_hash: string;
  /** The merged arguments as people see them (masked, scrubbed). */
  args: Record<string, unknown>;
  policy: ApprovalPolicy;
  requires?: Quorum;
  preview?: unknown;
  preview_error?: string;
  preview_hash?: string;
  /**
   * The preview on the card the editor edited (the call's before this edit): the approval that
   * came with the edit is bound to it, and the run checks it still holds.
   */
  bound_preview?: unknown;
}

/** Where one call of an interrupt stands while the interrupt still waits. */
export interface CallProgress {
  /** Who approved it so far (a quorum call needs several). */
  approvals: Array<{ by: string; at: number }>;
  /** The call's version: 1 as asked, one more at each edit (absent: 1). */
  version?: number;
  /** The call as edited, when someone edited it (approvals count from the edit on). */
  edit?: CallEdit;
  /** Decided before the interrupt as a whole: enough approvals, or one rejection. */
  closed?: { decision: "approved" | "rejected"; by: string; at: number; reason?: string };
}

/** The calls' progress, by call id; a call not named has none yet. */
export type InterruptProgress = Record<string, CallProgress>;

