import { z } from "zod";
import { pendingCallSchema, type PendingCall } from "./events.js";
import { AUDIT_DECISIONS, type AuditDecision } from "./resources.js";

/** The changes of an interrupt a webhook reports (and that it still waits, escalated). */
export const APPROVAL_WEBHOOK_TYPES = ["approval.requested", "approval.decided", "approval.expired", "approval.cancelled", "approval.escalated"] as const;
export type ApprovalWebhookType = (typeof APPROVAL_WEBHOOK_TYPES)[number];

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
  /** approval.escalated: the calls still waiting for a decision. */
  waiting_on?: string[];
  /** approval.decided: true when calls of the interrupt still wait (a quorum decided call by call). */
  partial?: boolean;
  /** When the change happened. */
  at: string;
}

/**
 * The approval webhook body as a zod schema: for the OpenAPI document's `webhooks` entry, and for a
 * receiver that wants to check what it got (after verifying the signature over the raw bytes).
 */
export const approvalWebhookSchema = z.object({
  type: z.enum(APPROVAL_WEBHOOK_TYPES),
  thread_id: z.string(),
  interrupt_id: z.string(),
  calls: z.array(pendingCallSchema).describe("The pending calls as `GET /threads/{thread_id}` shows them: sensitive arguments masked."),
  expires_at: z.iso.datetime().describe("When the approval window closes (interrupt time + APPROVAL_TTL_SECONDS)."),
  requested_by: z.string().describe("The thread owner's `sub`."),
  decided_by: z
    .string()
    .optional()
    .describe("Who decided (`approval.decided`) or cancelled (`approval.cancelled` by a person); absent otherwise."),
  decisions: z
    .array(z.object({ call_id: z.string(), decision: z.enum(AUDIT_DECISIONS) }))
    .optional()
    .describe("`approval.decided` only: how each pending call was decided, as the audit trail records it."),
  waiting_on: z.array(z.string()).optional().describe("`approval.escalated` only: the calls still waiting for a decision."),
  partial: z
    .boolean()
    .optional()
    .describe("`approval.decided` in an interrupt that takes decisions call by call (a quorum): true while other calls still wait."),
  at: z.iso.datetime().describe("When the change happened."),
});

// Compile-time: the schema describes exactly the interface (both directions), as in resource-schemas.ts.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_: T) => _;
same<Same<z.infer<typeof approvalWebhookSchema>, ApprovalWebhook>>(true);
