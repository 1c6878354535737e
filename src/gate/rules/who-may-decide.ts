import { type PendingCall, refusals } from "../../protocol/index.js";

/** A call's policy, as the rules of who may decide read it. */
export type CallPolicy = Pick<PendingCall, "policy" | "requires">;

/** The policy a tool's rule gives for these arguments (a rule may answer otherwise after an edit). */
export type PolicyOf = (tool: string, args: Record<string, unknown>) => CallPolicy;

/** Who decides, as the rules read a principal: its name and roles. */
export interface Decider {
  readonly sub: string;
  readonly roles: readonly string[];
}

/** Who may decide what: identity's rules (roles, four eyes), passed in. */
export interface Deciders {
  /** With auth off there is one person: one approval closes any call. */
  readonly enforced: boolean;
  mayDecide(p: Decider, on: { owner: string; call: CallPolicy; requester: string | null }): boolean;
  mayDecideWaiting(p: Decider, on: { owner: string; calls: readonly CallPolicy[]; requester: string | null; partial: boolean }): boolean;
}

/** How many approvals close a call: a quorum's count, with auth on; else one. */
export function neededApprovals(deciders: Pick<Deciders, "enforced">, call: CallPolicy): number {
  return call.policy === "quorum" && deciders.enforced ? (call.requires?.approvers ?? 1) : 1;
}

/** `403` unless `p` may decide this one call. */
export function refuseUndecidable(deciders: Deciders, o: { p: Decider; owner: string; requester: string | null; call: CallPolicy & { call_id: string } }): void {
  if (!deciders.mayDecide(o.p, { owner: o.owner, call: o.call, requester: o.requester })) throw refusals.undecidableCall(o.call.call_id, o.call);
}

/**
 * `403` unless `p` may decide this open interrupt: every call when it is decided as a whole, at
 * least one when call by call. Four eyes is named when that is what stops the caller.
 */
export function refuseUndecidableInterrupt(
  deciders: Deciders,
  o: { p: Decider; owner: string; requester: string | null; calls: readonly CallPolicy[]; partial: boolean },
): void {
  if (deciders.mayDecideWaiting(o.p, { owner: o.owner, calls: o.calls, requester: o.requester, partial: o.partial })) return;
  const fourEyes = o.calls.some((c) => c.policy === "approver") && (o.p.sub === o.owner || o.p.sub === o.requester);
  throw fourEyes ? refusals.fourEyes() : refusals.notEveryCall();
}

/**
 * In an interrupt decided as a whole, an edit re-resolves the call's policy on the new arguments:
 * the editor must be allowed under both, and an edit that would need a quorum is refused (it is
 * decided call by call: reject, and ask for the call again). `403`, nothing decided.
 */
export function refuseEditPastPolicy(
  deciders: Deciders,
  o: { p: Decider; owner: string; requester: string | null; call: CallPolicy & { call_id: string }; edited: CallPolicy },
): void {
  const { edited, call } = o;
  if (edited.policy === call.policy && edited.requires === undefined) return;
  if (edited.policy === "quorum") throw refusals.editNeedsQuorum(call.call_id, edited.requires ?? { approvers: 1 });
  if (!deciders.mayDecide(o.p, { owner: o.owner, call: edited, requester: o.requester })) throw refusals.editPastPolicy(call.call_id, edited);
}
