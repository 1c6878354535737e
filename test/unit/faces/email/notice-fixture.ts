/** A notice as the server would map it from an open interrupt: masked arguments, a preview, versions. */
import type { ApprovalNotice } from "../../../../src/faces/email/index.js";
import type { PendingCall } from "../../../../src/protocol/index.js";

export function refundCall(over: Partial<PendingCall> = {}): PendingCall {
  return {
    call_id: "call_refund_1",
    name: "issue_refund",
    version: 1,
    args: { order_id: "A-1001", amount_cents: 4200, card_number: "***" },
    policy: "approver",
    preview: { refund: "4200 cents to order A-1001" },
    editable: true,
    args_schema: { type: "object" },
    ...over,
  };
}

export function notice(now: number, over: Partial<ApprovalNotice> = {}): ApprovalNotice {
  return {
    thread_id: "thr_1",
    interrupt_id: "int_1",
    calls: [refundCall()],
    expires_at: new Date(now + 3_600_000).toISOString(),
    requested_by: "alice",
    ...over,
  };
}
