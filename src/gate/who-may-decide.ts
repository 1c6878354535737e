import type { Principal } from "../auth/index.js";
import { AppError, type PendingCall } from "../protocol/index.js";
import { clip } from "./refusals.js";

/** A call's policy, as the rules of who may decide read it. */
export type CallPolicy = Pick<PendingCall, "policy" | "requires">;

/** The policy a tool's rule gives for these arguments (a rule may answer otherwise after an edit). */
export type PolicyOf = (tool: string, args: Record<string, unknown>) => CallPolicy;

/** Who may decide what: identity's rules (roles, four eyes), passed in. */
export interface Deciders {
  /** With auth off there is one person: one approval closes any call. */
  readonly enforced: boolean;
  mayDecide(p: Principal, on: { owner: string; call: CallPolicy; requester: string | null }): boolean;
  mayDecideWaiting(p: Principal, on: { owner: string; calls: readonly CallPolicy[]; requester: string | null; partial: boolean }): boolean;
}

/** Who a call's policy lets decide it, in words. */
export function whoMay(call: CallPolicy): string {
  if (call.policy === "quorum") return `it needs ${call.requires?.approvers ?? 1} of role '${call.requires?.role ?? "approver"}', none of them its owner or requester`;
  return call.policy === "approver" ? "it needs an approver other than its owner or requester" : "it needs its owner or an approver";
}

/** How many approvals close a call: a quorum's count, with auth on; else one. */
export function neededApprovals(deciders: Pick<Deciders, "enforced">, call: CallPolicy): number {
  return call.policy === "quorum" && deciders.enforced ? (call.requires?.approvers ?? 1) : 1;
}

/** `403` unless `p` may decide this one call. */
export function refuseUndecidable(deciders: Deciders, o: { p: Principal; owner: string; requester: string | null; call: CallPolicy & { call_id: string } }): void {
  if (!deciders.mayDecide(o.p, { owner: o.owner, call: o.call, requester: o.requester })) throw new AppError("forbidden", `You may not decide call ${clip(o.call.call_id)}: ${whoMay(o.call)}`);
}

/** `403`: the editor would not be allowed to decide the call as the edit makes it. */
export function forbiddenAfterEdit(callId: string, edited: CallPolicy): AppError {
  return new AppError("forbidden", `With these edits call ${clip(callId)} ${whoMay(edited).replace(/^it needs/, "would need")}: you may not decide it then`);
}

/**
 * `403` unless `p` may decide this open interrupt: every call when it is decided as a whole, at
 * least one when call by call. Four eyes is named when that is what stops the caller.
 */
export function refuseUndecidableInterrupt(
  deciders: Deciders,
  o: { p: Principal; owner: string; requester: string | null; calls: readonly CallPolicy[]; partial: boolean },
): void {
  if (deciders.mayDecideWaiting(o.p, { owner: o.owner, calls: o.calls, requester: o.requester, partial: o.partial })) return;
  const fourEyes = o.calls.some((c) => c.policy === "approver") && (o.p.sub === o.owner || o.p.sub === o.requester);
  throw new AppError(
    "forbidden",
    fourEyes ? "Four eyes: a call here needs an approver other than the one who asked for it; the owner may cancel" : "You may not decide every call of this interrupt",
  );
}

/**
 * In an interrupt decided as a whole, an edit re-resolves the call's policy on the new arguments:
 * the editor must be allowed under both, and an edit that would need a quorum is refused (it is
 * decided call by call: reject, and ask for the call again). `403`, nothing decided.
 */
export function refuseEditPastPolicy(
  deciders: Deciders,
  o: { p: Principal; owner: string; requester: string | null; call: CallPolicy & { call_id: string }; edited: CallPolicy },
): void {
  const { edited, call } = o;
  if (edited.policy === call.policy && edited.requires === undefined) return;
  if (edited.policy === "quorum") {
    throw new AppError("forbidden", `With these edits call ${clip(call.call_id)} would need ${edited.requires!.approvers} of ${edited.requires!.role}: reject it, and ask for it again`);
  }
  if (!deciders.mayDecide(o.p, { owner: o.owner, call: edited, requester: o.requester })) {
    throw new AppError(
      "forbidden",
      `With these edits call ${clip(call.call_id)} would need ${edited.policy === "approver" ? "an approver other than its owner or requester" : "its owner or an approver"}`,
    );
  }
}
