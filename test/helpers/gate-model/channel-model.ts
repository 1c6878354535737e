/**
 * What Slack and email can say, in the model's terms ("Approvals where approvers are: Slack and
 * email"): a person there approves every open call the message or mail shows, at the versions it
 * shows, or rejects them; nothing call by call, no edit. In an interrupt decided call by call that
 * is this person's decision on each shown call still open that they may decide (an approval
 * skips the calls they approved already); when that leaves none, every shown call is sent and the
 * gate gives its own refusal. A mail's link also dies with its interrupt, at its deadline, and
 * when a call it shows has moved on ("Links").
 */
import { type BoundDecision, type MInterrupt, type Model, type Prediction, policyOfCall } from "./model.js";
import { mayDecide, type Who } from "./principals.js";

export type ChannelAction = "approve" | "reject";

/** `w`'s click or link post on `intr`, as the decisions the gate is handed. `shown`: call id → version shown. */
export function channelBind(intr: MInterrupt, w: Who, action: ChannelAction, shown: Readonly<Record<string, number>>): BoundDecision[] {
  const calls = intr.calls.filter((c) => c.id in shown);
  const one = (call: (typeof calls)[number]): BoundDecision => ({ call, kind: action, seen: shown[call.id]!, version: shown[call.id]! });
  if (intr.state !== "waiting" || !intr.partial) return calls.map(one);
  const mine = calls.filter((c) => !c.closed && !(action === "approve" && c.counting.some((a) => a.by === w)) && mayDecide(w, policyOfCall(c)));
  return (mine.length ? mine : calls).map(one);
}

/** A link's own refusals, before the gate is asked: its interrupt past its deadline, closed, or a shown call edited since. */
export function linkRefusal(m: Model, intr: MInterrupt, shown: Readonly<Record<string, number>>): Prediction | undefined {
  if (intr.state === "expired" || (intr.state === "waiting" && m.now >= intr.expiresAt)) return { kind: "refused", status: 410, code: "approval_expired" };
  if (intr.state !== "waiting") return { kind: "refused", status: 410, code: "not_waiting" };
  if (intr.calls.some((c) => c.id in shown && shown[c.id] !== c.versions.length)) return { kind: "refused", status: 410, code: "call_changed" };
  return undefined;
}

/** Whether two lists of bound decisions are the same decision (the same calls, kinds and versions). */
export function sameDecision(a: readonly BoundDecision[], b: readonly BoundDecision[]): boolean {
  const key = (d: BoundDecision) => `${d.call.id}:${d.kind}:${d.kind === "reject" ? "" : `${d.version ?? 1}/${d.seen}`}:${JSON.stringify(d.edited ?? null)}`;
  const ka = a.map(key).sort();
  const kb = b.map(key).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i]);
}
