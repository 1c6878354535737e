import type { Principal } from "../../auth/index.js";
import type { Decision } from "../../protocol/index.js";
import { applyDecisions, refusals, type CheckedEdit, type TakenDecision } from "../../gate/index.js";
import { type AuditRecord, callRow, type InterruptProgress, type InterruptRecord } from "../../store/index.js";
import type { PreparedEdits } from "../start/edit-check.js";
import { keptEdit } from "./kept-edits.js";
import { ProgressConflict } from "./progress-conflict.js";
import type { RunContext } from "../run-context.js";

export { takesPartialDecisions } from "../../gate/index.js";

/** What `p`'s decisions make of the interrupt's progress. */
export interface PartialStep {
  progress: InterruptProgress;
  /** One audit row per decision taken now. */
  rows: AuditRecord[];
  /** The calls still open after it; none: the interrupt is decided and its run may start. */
  waitingOn: string[];
}

/**
 * `p`'s decisions on an interrupt decided call by call, through the gate's reducer, with the
 * edits prepared for this very progress (`ProgressConflict` when they were made for another: take
 * the request again), and one audit row per decision taken.
 */
export function takePartialDecisions(
  ctx: RunContext,
  o: { open: InterruptRecord; owner: string; p: Principal; decisions: readonly Decision[]; edits: PreparedEdits; now: number },
): PartialStep {
  const { open, decisions, edits } = o;
  // Edits are checked against the progress as it is: none checked yet while this resume or an
  // earlier decision has some, or another decision since, and they are prepared (again).
  const needsEdits = decisions.some((d) => d.edited_args !== undefined) || Object.values(open.progress).some((c) => c.edit);
  if (needsEdits && edits.progressSeq !== open.progress_seq) throw new ProgressConflict();
  const checked = new Map<string, CheckedEdit>();
  if (edits.interruptId === open.interrupt_id) {
    for (const [callId, e] of edits.byCall) if (!("error" in e)) checked.set(callId, e);
  }
  const step = applyDecisions({
    calls: open.calls,
    progress: open.progress,
    owner: o.owner,
    requester: open.requester,
    p: o.p,
    decisions,
    edits: checked,
    now: o.now,
    deciders: ctx.access,
    policyOf: (tool, args) => ctx.registry.policyOf(tool, args),
    shownArgs: (tool, args) => ctx.redactor.scrubber.scrubDeep(ctx.registry.mask(tool, args)),
    keptEdit: (tool, editedArgs) => keptEdit(ctx, tool, editedArgs),
    auditHash: (v) => ctx.store.audit.hash(v),
  });
  return { progress: step.progress, waitingOn: step.waitingOn, rows: step.taken.map((t) => auditRow(open, t, o)) };
}

/** The audit row of one decision: the call as its decider was shown it, preview and version included. */
function auditRow(open: InterruptRecord, t: TakenDecision, by: { p: Principal; now: number }): AuditRecord {
  const row = callRow(open, open.calls.find((c) => c.call_id === t.call.call_id)!, { by: by.p.sub, at: by.now });
  const hashes = { ...(t.run_args_hash ? { run_args_hash: t.run_args_hash } : {}), ...(t.edited_args_hash ? { edited_args_hash: t.edited_args_hash } : {}) };
  return { ...row, ...hashes, decision: t.decision, reason: t.reason };
}

