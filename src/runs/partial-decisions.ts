import type { Principal } from "../auth/index.js";
import { AppError, type Decision } from "../protocol/index.js";
import { type AuditRecord, callRow, type InterruptProgress, type InterruptRecord } from "../store/index.js";

import type { RunContext } from "./run-context.js";

/** An interrupt that holds a quorum call takes decisions call by call, not as a whole. */
export const takesPartialDecisions = (r: Pick<InterruptRecord, "calls">): boolean => r.calls.some((c) => c.policy === "quorum");

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
 * Applies `p`'s decisions to the calls they name, or refuses them all: a call `p` may not decide
 * (`403`); one already closed, or a quorum call `p` approved before (`409 already_decided`); an edit
 * (`400`: not taken call by call). An approval of a quorum call counts once per principal, and
 * closes it approved at `requires.approvers` (one, with auth off); any other call, and any
 * rejection, closes at once. Calls left out stay as they were.
 */
export function takePartialDecisions(ctx: RunContext, o: { open: InterruptRecord; owner: string; p: Principal; decisions: readonly Decision[]; now: number }): PartialStep {
  const { open, owner, p, decisions, now } = o;
  const progress: InterruptProgress = structuredClone(open.progress);
  const calls = new Map(open.calls.map((c) => [c.call_id, c]));
  if (decisions.some((d) => d.edited_args !== undefined)) {
    throw new AppError("invalid_request", "An interrupt that needs a quorum takes no edits: reject the call, and ask for it again as it should be");
  }
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
    if (at.approvals.some((a) => a.by === p.sub)) throw new AppError("already_decided", `You already approved call ${d.call_id.slice(0, 200)}`);
    at.approvals.push({ by: p.sub, at: now });
    const needed = call.policy === "quorum" && ctx.access.enforced ? (call.requires?.approvers ?? 1) : 1;
    if (at.approvals.length >= needed) at.closed = { decision: "approved", by: p.sub, at: now };
    rows.push({ ...row, decision: "approved", reason: d.reason ?? null, run_args_hash: call.args_hash });
  }
  const waitingOn = open.calls.filter((c) => !progress[c.call_id]?.closed).map((c) => c.call_id);
  return { progress, rows, waitingOn };
}

/** The closed calls as decisions for the run's gate: approved ones bound to the arguments shown. */
export function decisionsFromProgress(open: InterruptRecord, progress: InterruptProgress): Decision[] {
  return open.calls.map((c) => {
    const closed = progress[c.call_id]?.closed;
    return closed?.decision === "approved" ? { call_id: c.call_id, approved: true } : { call_id: c.call_id, approved: false, reason: closed?.reason ?? DEFAULT_REASON };
  });
}

function whoMay(call: { policy: string; requires?: { role: string; approvers: number } | undefined }): string {
  if (call.policy === "quorum") return `it needs ${call.requires?.approvers ?? 1} of role '${call.requires?.role ?? "approver"}', none of them its owner or requester`;
  return call.policy === "approver" ? "it needs an approver other than its owner or requester" : "it needs its owner or an approver";
}
