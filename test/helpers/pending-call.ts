import type { PendingCall } from "../../src/protocol/index.js";

/** A pending refund call as the gate shows it (its account masked), with what a test changes. */
export const pendingCall = (over: Partial<PendingCall> = {}): PendingCall => ({
  call_id: "c1",
  name: "refund_order",
  version: 1,
  args: { order_id: "A-1", amount_cents: 4_200, account: "***" },
  policy: "approver",
  editable: true,
  args_schema: { type: "object" },
  ...over,
});
