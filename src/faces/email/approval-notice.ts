import type { ApprovalWebhook, InterruptPayload, PendingCall } from "../../protocol/index.js";

/**
 * What a mail and a decide page show of an open interrupt. It is the approval webhook's body cut
 * to what a person needs (and so what the outbox already carries for the Slack lane): the calls as
 * `GET /threads/:id` shows them (`interruptPayload` → `redactor.interrupt`: sensitive arguments
 * masked, previews scrubbed), the deadline, who asked. Never build it from unmasked calls.
 */
export interface ApprovalNotice {
  thread_id: string;
  interrupt_id: string;
  /** Masked, with previews and versions, as `InterruptPayload.calls`. */
  calls: PendingCall[];
  /** ISO 8601, as `InterruptPayload.expires_at`. */
  expires_at: string;
  /** The thread owner's `sub`. */
  requested_by: string;
  /** Why this mail: asked now, still waiting (escalated), or asked again after an edit. */
  reason?: "requested" | "escalated" | "edited";
}

/** What a change of an interrupt means for mail: a mail to who may decide, closing its links, or nothing. */
export type EmailOfChange = { kind: "mail"; notice: ApprovalNotice } | { kind: "close" } | { kind: "none" };

/**
 * What to mail for a change: asked (every call), escalated (the calls still waiting, "still
 * waiting"), or an edit in a quorum (the calls still open at their new versions, "asked again":
 * the old links are stale). A partial approval mails nobody: the other links still stand. A
 * closing change kills the links.
 */
export function emailOfChange(w: ApprovalWebhook): EmailOfChange {
  const base = { thread_id: w.thread_id, interrupt_id: w.interrupt_id, expires_at: w.expires_at, requested_by: w.requested_by };
  if (w.type === "approval.requested") return { kind: "mail", notice: { ...base, calls: w.calls, reason: "requested" } };
  if (w.type === "approval.escalated") {
    const calls = w.waiting_on ? w.calls.filter((c) => w.waiting_on!.includes(c.call_id)) : w.calls;
    return { kind: "mail", notice: { ...base, calls, reason: "escalated" } };
  }
  if (w.type === "approval.decided" && w.partial === true) {
    if (!w.decisions?.some((d) => d.decision === "edited")) return { kind: "none" };
    const decided = new Set(w.decisions.filter((d) => d.decision === "rejected").map((d) => d.call_id));
    const calls = w.calls.filter((c) => !decided.has(c.call_id) && (c.policy !== "quorum" || (c.approvals?.length ?? 0) < (c.requires?.approvers ?? 1)));
    return { kind: "mail", notice: { ...base, calls, reason: "edited" } };
  }
  return { kind: "close" };
}

/**
 * The notice for a thread's open interrupt as `GET /threads/:id` shows it (`ThreadView.pending`,
 * already masked by the redactor), for the decide page's `openInterrupt`. Null when it waits on
 * nothing. Questions are not shown: a link decides calls only.
 */
export function noticeOfPending(view: { owner: string; pending: InterruptPayload | null }): ApprovalNotice | null {
  if (!view.pending) return null;
  const p = view.pending;
  return { thread_id: p.thread_id, interrupt_id: p.interrupt_id, calls: p.calls, expires_at: p.expires_at, requested_by: view.owner };
}

/** call id → version, as the notice shows them: what a link is bound to. */
export function shownVersions(n: Pick<ApprovalNotice, "calls">): Record<string, number> {
  return Object.fromEntries(n.calls.map((c) => [c.call_id, c.version ?? 1]));
}

/**
 * Whether the versions a link was minted for are still those of the open interrupt: every call it
 * shows is still open at that version. An edit moves a version; a decided call drops out.
 */
export function versionsCurrent(minted: Readonly<Record<string, number>>, open: Pick<ApprovalNotice, "calls">): boolean {
  const now = shownVersions(open);
  return Object.entries(minted).every(([id, v]) => now[id] === v);
}
