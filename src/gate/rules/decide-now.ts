import { type Decision, refusals } from "../../protocol/index.js";
import type { GateCall } from "./gate-call.js";
import type { InterruptProgress } from "./progress-types.js";
import type { Decider, Deciders } from "./who-may-decide.js";

/** One choice on every call a face showed: approve them all, or reject them with a reason. */
export type ShownChoice = { approve: true } | { approve: false; reason: string };

/** A face's decision as a person took it there: one choice, on the calls it showed at the versions it showed. */
export interface ShownDecision {
  choice: ShownChoice;
  /** call id → version, as the face showed them. */
  versions: Readonly<Record<string, number>>;
}

export interface DecideNowInput {
  /** The open interrupt's calls as they now stand. */
  calls: readonly Pick<GateCall, "call_id" | "policy" | "requires">[];
  progress: InterruptProgress;
  /** Whether the interrupt takes decisions call by call (`takesPartialDecisions`). */
  partial: boolean;
  owner: string;
  requester: string | null;
  p: Decider;
  deciders: Deciders;
  shown: ShownDecision;
}

/**
 * Which of the calls a face showed `p` decides now with one choice. An interrupt decided as a
 * whole: every call shown (the gate then holds the decision to every rule of a whole decision).
 * One decided call by call: the calls shown that are still open, that `p` may decide, and, to
 * approve, that `p` has not approved yet. When that leaves none, every call shown: the gate's
 * own refusal for them (`403`, `409 already_decided`) is the answer, as it would be through the API.
 */
export function callsDecidableNow(o: DecideNowInput): string[] {
  const shown = Object.keys(o.shown.versions);
  if (!shown.length) throw refusals.nothingShown();
  if (!o.partial) return shown;
  const byId = new Map(o.calls.map((c) => [c.call_id, c]));
  const mine = shown.filter((id) => {
    const call = byId.get(id);
    const at = o.progress[id];
    if (!call || at?.closed) return false;
    if (o.shown.choice.approve && at?.approvals.some((a) => a.by === o.p.sub)) return false;
    return o.deciders.mayDecide(o.p, { owner: o.owner, call, requester: o.requester });
  });
  return mine.length ? mine : shown;
}

/** The calls `p` decides now (`callsDecidableNow`) as the gate's decisions, each at the version the face showed. */
export function decisionsOnShown(o: DecideNowInput): Decision[] {
  const { choice, versions } = o.shown;
  return callsDecidableNow(o).map((call_id) => (choice.approve ? { call_id, approved: true, version: versions[call_id] } : { call_id, approved: false, reason: choice.reason, version: versions[call_id] }));
}
