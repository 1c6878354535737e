import type { AuditDecision, PendingCall } from "../protocol/index.js";

export type ApprovalWebhookType = "approval.requested" | "approval.decided" | "approval.expired" | "approval.cancelled";

/** The body of an approval webhook (API.md *Notifications*). */
export interface ApprovalWebhook {
  type: ApprovalWebhookType;
  thread_id: string;
  interrupt_id: string;
  /** The pending calls as `GET /threads/:id` shows them: sensitive arguments masked. */
  calls: PendingCall[];
  expires_at: string;
  /** The thread owner's `sub`. */
  requested_by: string;
  /** Who decided (approval.decided) or cancelled (approval.cancelled by a person). */
  decided_by?: string;
  /** approval.decided: how each pending call was decided, as the audit trail records it. */
  decisions?: Array<{ call_id: string; decision: AuditDecision }>;
  /** When the change happened. */
  at: string;
}

/** The exact bytes that are stored, signed and sent: fixed once, so every retry signs the same body. */
export function approvalWebhookBody(w: ApprovalWebhook): string {
  const { decided_by, decisions, ...rest } = w;
  return JSON.stringify({ ...rest, ...(decided_by !== undefined ? { decided_by } : {}), ...(decisions ? { decisions } : {}) });
}
