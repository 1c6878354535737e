import type { PendingCall } from "./events.js";

/**
 * Who must decide a pending call, in words a card can show: "Needs an approver", "Needs 2 of
 * finance — approved by fin1". The same words on the page and in any app built on the hook.
 */
export function policyInWords(call: Pick<PendingCall, "policy" | "requires" | "approvals">): string {
  if (call.policy === "owner") return "Needs the thread's owner";
  if (call.policy === "approver") return "Needs an approver";
  const { role, approvers } = call.requires ?? { role: "approver", approvers: 1 };
  const who = role === "approver" ? `${approvers} approver${approvers === 1 ? "" : "s"}` : `${approvers} of ${role}`;
  const by = call.approvals?.length ? ` — approved by ${call.approvals.map((a) => a.by).join(", ")}` : "";
  return `Needs ${who}${by}`;
}

/** What a person who may not decide a call is told it waits for. */
export function waitingInWords(call: Pick<PendingCall, "policy" | "requires" | "approvals">): string {
  if (call.policy === "owner") return "Waiting for the thread's owner";
  if (call.policy === "approver") return "Waiting for an approver";
  const { role, approvers } = call.requires ?? { role: "approver", approvers: 1 };
  const left = Math.max(0, approvers - (call.approvals?.length ?? 0));
  const more = call.approvals?.length ? " more" : "";
  return role === "approver" ? `Waiting for ${left}${more} approver${left === 1 ? "" : "s"}` : `Waiting for ${left}${more} of ${role}`;
}

/** Both in one line for a message or a mail: "Needs 2 of finance — approved by fin1, waiting for 1 more of finance". */
export function policyLine(call: Pick<PendingCall, "policy" | "requires" | "approvals">): string {
  const words = policyInWords(call);
  if (call.policy !== "quorum" || !call.approvals?.length) return words;
  const waiting = waitingInWords(call);
  return `${words}, ${waiting[0]!.toLowerCase()}${waiting.slice(1)}`;
}
