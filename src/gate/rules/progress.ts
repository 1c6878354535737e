import { DEFAULT_REASON, type Decision, refusals } from "../../protocol/index.js";
import { hashArgs } from "../permit/args-hash.js";
import type { GateCall } from "./gate-call.js";
import type { CallEdit, InterruptProgress } from "./progress-types.js";
import { type Decider, type Deciders, neededApprovals, type PolicyOf, refuseUndecidable } from "./who-may-decide.js";

/** An edit checked against the call's real arguments and schema, and what it makes the call. */
export interface CheckedEdit {
  /** The merged arguments (real values). */
  args: Record<string, unknown>;
  /** The keys the edit really changed. */
  changed: string[];
  /** The keys as the editor sent them. */
  edited_args: Record<string, unknown>;
  /** The edited call's preview, taken again on the new arguments (absent: the tool has none). */
  preview?: { preview?: unknown; preview_error?: string; preview_hash?: string };
}

/** One decision the reducer took, for the audit trail. */
export interface TakenDecision {
  call: GateCall;
  decision: "approved" | "rejected" | "edited";
  reason: string | null;
  /** The version the decision was taken on. */
  version: number;
  /** The ledger's hash of the arguments an approval lets run. */
  run_args_hash?: string;
  /** For an edit: keyed hash of the merged arguments. */
  edited_args_hash?: string;
}

/** What `p`'s decisions make of the interrupt's progress. */
export interface ProgressStep {
  progress: InterruptProgress;
  taken: TakenDecision[];
  /** The calls still open after it; none: the interrupt is decided and its run may start. */
  waitingOn: string[];
}

export interface ProgressInput {
  /** The calls as they now stand (edits applied, versions current). */
  calls: readonly GateCall[];
  progress: InterruptProgress;
  owner: string;
  requester: string | null;
  p: Decider;
  decisions: readonly Decision[];
  /** The checked edit of each decision that carries one. */
  edits: ReadonlyMap<string, CheckedEdit>;
  now: number;
  deciders: Deciders;
  policyOf: PolicyOf;
  /** The merged arguments as people see them (masked, scrubbed). */
  shownArgs(name: string, args: Record<string, unknown>): Record<string, unknown>;
  /** The edit's keys as the record may keep them: sensitive values masked, the real ones sealed. */
  keptEdit(name: string, editedArgs: Record<string, unknown>): Pick<CallEdit, "edited_args" | "sealed_args">;
  /** The audit's keyed hash. */
  auditHash(value: unknown): string;
}

/**
 * The partial-decision reducer: (progress, decisions, principal) → progress. Applies `p`'s
 * decisions to the calls they name, or refuses them all: a call `p` may not decide, before or
 * after its edit (`403`); one already closed, or a quorum call `p` approved before
 * (`409 already_decided`). An approval of a quorum call counts once per principal and closes it at
 * `requires.approvers` (one, with auth off); any other call, and any rejection, closes at once. An
 * edit is a new version of the call (even one back to the call as asked): policy resolved again,
 * preview taken again, approvals given before it no longer count, and it is the editor's approval,
 * bound to the preview on the card the editor edited. Versions were checked before (`checkVersions`).
 */
export function applyDecisions(o: ProgressInput): ProgressStep {
  const { p, owner, requester, deciders, now } = o;
  if (!o.decisions.length) throw refusals.noCallNamed();
  const calls = new Map(o.calls.map((c) => [c.call_id, c]));
  for (const d of o.decisions) refuseUndecidable(deciders, { p, owner, requester, call: calls.get(d.call_id)! });
  const progress: InterruptProgress = structuredClone(o.progress);
  const taken: TakenDecision[] = [];
  for (const d of o.decisions) {
    const call = calls.get(d.call_id)!;
    const at = (progress[d.call_id] ??= { approvals: [] });
    if (at.closed) throw refusals.alreadyDecided(d.call_id, at.closed.decision);
    if (!d.approved) {
      const reason = d.reason ?? DEFAULT_REASON;
      at.closed = { decision: "rejected", by: p.sub, at: now, reason };
      taken.push({ call, decision: "rejected", reason, version: call.version });
      continue;
    }
    const edit = d.edited_args === undefined ? undefined : o.edits.get(d.call_id);
    if (d.edited_args !== undefined && !edit) throw refusals.editCheckedElsewhere();
    if (edit && (edit.changed.length || at.edit)) {
      const policy = o.policyOf(call.name, edit.args);
      if (!deciders.mayDecide(p, { owner, call: policy, requester })) {
        throw refusals.forbiddenAfterEdit(d.call_id, policy);
      }
      const version = (at.version ?? 1) + 1;
      const run_args_hash = hashArgs(edit.args);
      const edited_args_hash = o.auditHash(edit.args);
      if (edit.changed.length) {
        at.edit = {
          ...o.keptEdit(call.name, edit.edited_args),
          changed: edit.changed,
          run_args_hash,
          edited_args_hash,
          args: o.shownArgs(call.name, edit.args),
          ...policy,
          ...(edit.preview ?? {}),
          // What the editor was shown: the approval that comes with the edit is bound to it.
          ...(call.preview !== undefined ? { bound_preview: call.preview } : {}),
        };
      } else delete at.edit; // back to the call as asked
      at.version = version;
      at.approvals = [{ by: p.sub, at: now }];
      if (at.approvals.length >= neededApprovals(deciders, policy)) at.closed = { decision: "approved", by: p.sub, at: now };
      taken.push({ call, decision: "edited", reason: d.reason ?? null, version: call.version, edited_args_hash, run_args_hash });
      continue;
    }
    if (at.approvals.some((a) => a.by === p.sub)) throw refusals.alreadyApproved(d.call_id);
    at.approvals.push({ by: p.sub, at: now });
    if (at.approvals.length >= neededApprovals(deciders, call)) at.closed = { decision: "approved", by: p.sub, at: now };
    taken.push({ call, decision: "approved", reason: d.reason ?? null, version: call.version, run_args_hash: at.edit?.run_args_hash ?? call.args_hash });
  }
  const waitingOn = o.calls.filter((c) => !progress[c.call_id]?.closed).map((c) => c.call_id);
  return { progress, taken, waitingOn };
}

/**
 * The closed calls as decisions for the run's gate: approved ones with the edit they were approved
 * with, its real values (`realEdit` opens what was sealed).
 */
export function decisionsFromProgress(
  calls: readonly Pick<GateCall, "call_id">[],
  o: { progress: InterruptProgress; realEdit: (edit: CallEdit) => Record<string, unknown> },
): Decision[] {
  return calls.map((c) => {
    const at = o.progress[c.call_id];
    if (at?.closed?.decision !== "approved") return { call_id: c.call_id, approved: false, reason: at?.closed?.reason ?? DEFAULT_REASON };
    return at.edit ? { call_id: c.call_id, approved: true, edited_args: o.realEdit(at.edit) } : { call_id: c.call_id, approved: true };
  });
}

/**
 * An interrupt that holds a quorum call takes decisions call by call, not as a whole; and once it
 * has taken one, it stays so (an edit may have taken the quorum away from the call that had it).
 */
export const takesPartialDecisions = (r: { calls: readonly Pick<GateCall, "policy">[]; progress?: InterruptProgress }): boolean =>
  r.calls.some((c) => c.policy === "quorum") || Object.keys(r.progress ?? {}).length > 0;
