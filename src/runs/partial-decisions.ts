import type { Principal } from "../auth/index.js";
import { AppError, type Decision } from "../protocol/index.js";
import { type AuditRecord, callRow, type InterruptCall, type InterruptProgress, type InterruptRecord } from "../store/index.js";
import { hashArgs } from "../tools/index.js";
import type { PreparedEdits } from "./edit-check.js";
import { ProgressConflict } from "./progress-conflict.js";
import type { RunContext } from "./run-context.js";

/**
 * An interrupt that holds a quorum call takes decisions call by call, not as a whole; and once it
 * has taken one, it stays so (an edit may have taken the quorum away from the call that had it).
 */
export const takesPartialDecisions = (r: Pick<InterruptRecord, "calls"> & { progress?: InterruptRecord["progress"] }): boolean =>
  r.calls.some((c) => c.policy === "quorum") || Object.keys(r.progress ?? {}).length > 0;

/** What `p`'s decisions make of the interrupt's progress. */
export interface PartialStep {
  progress: InterruptProgress;
  /** One audit row per decision taken now. */
  rows: AuditRecord[];
  /** The calls still open after it; none: the interrupt is decided and its run may start. */
  waitingOn: string[];
}

const DEFAULT_REASON = "User denied";

/**
 * Applies `p`'s decisions to the calls they name, or refuses them all: a call `p` may not decide,
 * before or after their edit (`403`); one already closed, or a quorum call `p` approved before
 * (`409 already_decided`). An approval of a quorum call counts once per principal, and closes it
 * approved at `requires.approvers` (one, with auth off); any other call, and any rejection, closes
 * at once. An edit makes the call what it says (policy resolved again, preview taken again) and
 * is its first approval: those given before it no longer count. Calls left out stay as they were.
 */
export function takePartialDecisions(
  ctx: RunContext,
  o: { open: InterruptRecord; owner: string; p: Principal; decisions: readonly Decision[]; edits: PreparedEdits; now: number },
): PartialStep {
  const { open, owner, p, decisions, edits, now } = o;
  if (!decisions.length) throw new AppError("invalid_request", "Name at least one call: this interrupt is decided call by call");
  // Edits are checked against the progress as it is: none checked yet while this resume or an
  // earlier decision has some, or another decision since, and they are prepared (again).
  const needsEdits = decisions.some((d) => d.edited_args !== undefined) || Object.values(open.progress).some((c) => c.edit);
  if (needsEdits && edits.progressSeq !== open.progress_seq) throw new ProgressConflict();
  const progress: InterruptProgress = structuredClone(open.progress);
  const calls = new Map(open.calls.map((c) => [c.call_id, c]));
  for (const d of decisions) {
    if (!ctx.access.mayDecide(p, owner, calls.get(d.call_id)!, open.requester)) {
      throw new AppError("forbidden", `You may not decide call ${d.call_id.slice(0, 200)}: ${whoMay(calls.get(d.call_id)!)}`);
    }
  }
  const rows: AuditRecord[] = [];
  for (const d of decisions) {
    const call = calls.get(d.call_id)!;
    const at = (progress[d.call_id] ??= { approvals: [] });
    if (at.closed) throw new AppError("already_decided", `Call ${d.call_id.slice(0, 200)} was already ${at.closed.decision}`);
    const row = callRow(open, call, p.sub, now);
    if (!d.approved) {
      const reason = d.reason ?? DEFAULT_REASON;
      at.closed = { decision: "rejected", by: p.sub, at: now, reason };
      rows.push({ ...row, decision: "rejected", reason });
      continue;
    }
    const edit = d.edited_args === undefined ? undefined : checkedEdit(edits, open.interrupt_id, d.call_id);
    // An edit is a new version of the call, even one that puts it back as the model asked.
    if (edit && (edit.changed.length || at.edit)) {
      // The call is now what the edit makes it: its policy on the new arguments (which the editor
      // must meet), its preview taken again; approvals given to what it was no longer count.
      const edited = ctx.registry.policyOf(call.name, edit.args);
      if (!ctx.access.mayDecide(p, owner, edited, open.requester)) {
        throw new AppError("forbidden", `With these edits call ${d.call_id.slice(0, 200)} ${whoMay(edited).replace(/^it needs/, "would need")}: you may not decide it then`);
      }
      const version = {
        edited_args: edit.edited_args,
        changed: edit.changed,
        run_args_hash: hashArgs(edit.args),
        edited_args_hash: ctx.store.audit.hash(edit.args),
        args: ctx.redactor.scrubber.scrubDeep(ctx.registry.mask(call.name, edit.args)),
        ...edited,
        ...(edit.preview ?? {}),
      };
      if (edit.changed.length) at.edit = version;
      else delete at.edit; // back to the call as asked
      at.approvals = [{ by: p.sub, at: now }];
      if (at.approvals.length >= needed(ctx, edited)) at.closed = { decision: "approved", by: p.sub, at: now };
      const { preview_hash: _before, ...asked } = row;
      const seen = edit.preview?.preview_hash ? { preview_hash: edit.preview.preview_hash } : {};
      rows.push({ ...asked, ...seen, decision: "edited", reason: d.reason ?? null, edited_args_hash: version.edited_args_hash, run_args_hash: version.run_args_hash });
      continue;
    }
    if (at.approvals.some((a) => a.by === p.sub)) throw new AppError("already_decided", `You already approved call ${d.call_id.slice(0, 200)}`);
    at.approvals.push({ by: p.sub, at: now });
    if (at.approvals.length >= needed(ctx, call)) at.closed = { decision: "approved", by: p.sub, at: now };
    rows.push({ ...row, decision: "approved", reason: d.reason ?? null, run_args_hash: at.edit?.run_args_hash ?? call.args_hash });
  }
  const waitingOn = open.calls.filter((c) => !progress[c.call_id]?.closed).map((c) => c.call_id);
  return { progress, rows, waitingOn };
}

/** The closed calls as decisions for the run's gate: approved ones with the edit they were approved with. */
export function decisionsFromProgress(open: InterruptRecord, progress: InterruptProgress): Decision[] {
  return open.calls.map((c) => {
    const at = progress[c.call_id];
    if (at?.closed?.decision !== "approved") return { call_id: c.call_id, approved: false, reason: at?.closed?.reason ?? DEFAULT_REASON };
    return at.edit ? { call_id: c.call_id, approved: true, edited_args: at.edit.edited_args } : { call_id: c.call_id, approved: true };
  });
}

/** How many approvals close a call: a quorum's count, with auth on; else one. */
function needed(ctx: RunContext, call: Pick<InterruptCall, "policy" | "requires">): number {
  return call.policy === "quorum" && ctx.access.enforced ? (call.requires?.approvers ?? 1) : 1;
}

/** The edit prepared for this call before the transaction; one made for another interrupt means it changed meanwhile. */
function checkedEdit(edits: PreparedEdits, interruptId: string, callId: string) {
  const edit = edits.interruptId === interruptId ? edits.byCall.get(callId) : undefined;
  if (!edit || "error" in edit) throw new AppError("thread_busy", "The interrupt changed while the edit was checked; try again");
  return edit;
}

function whoMay(call: { policy: string; requires?: { role: string; approvers: number } | undefined }): string {
  if (call.policy === "quorum") return `it needs ${call.requires?.approvers ?? 1} of role '${call.requires?.role ?? "approver"}', none of them its owner or requester`;
  return call.policy === "approver" ? "it needs an approver other than its owner or requester" : "it needs its owner or an approver";
}
