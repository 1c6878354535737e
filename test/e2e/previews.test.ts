/**
 * Previews bound into the approval, on a real server (and on PostgreSQL in the postgres project):
 * the demo's refund shows its order (status, total, refunded so far) on the call, in the event, the
 * thread view, the inbox and the webhook; the audit keeps the hash of what the approver saw; and a
 * refund whose order had another refund land after the approver looked does not run
 * (`stale_preview`), and the model is told.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { call, expectNoStackTraces, only, type Stack, startStack, terminal, threadId } from "./support.js";

const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
};
const AS_OPS = { authorization: "Bearer tok-ops-000001" };

let s: Stack;
let ops: TollgateClient;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  s = await startStack({
    AUTH_TOKENS: JSON.stringify(TOKENS),
    APPROVAL_WEBHOOK_URL: receiver.url,
    APPROVAL_WEBHOOK_SECRET: "whsec-test-0123456789abcdef",
    WEBHOOK_SWEEP_MS: "50",
  });
  ops = new TollgateClient({ baseUrl: s.server.url, token: "tok-ops-000001" });
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
  await receiver?.close();
});

async function refundAsked(id: string, callId: string, amount: number) {
  s.model.push({ toolCalls: [{ id: callId, name: "refund_order", args: { order_id: "A-1004", amount_cents: amount, reason: "late" } }] });
  return terminal(await s.client.run(id, "refund please").collect(), "interrupt");
}

describe("a refund's preview", () => {
  it("shows the order on the call everywhere the call is shown; the audit keeps the hash of what the approver saw", async () => {
    const id = threadId("pv-shown");
    const intr = await refundAsked(id, "pv1", 300);
    const order = { order_id: "A-1004", status: expect.any(String), total_cents: expect.any(Number), refunded_cents: expect.any(Number) };
    expect(intr.calls[0]).toMatchObject({ call_id: "pv1", preview: order });
    expect((await ops.getThread(id)).pending?.calls[0]?.preview).toEqual(intr.calls[0]!.preview);
    const inbox = (await call(s.server.url, "GET", "/approvals", undefined, AS_OPS)).json as { items: Array<{ thread_id: string; calls: Array<{ preview?: unknown }> }> };
    expect(inbox.items.find((i) => i.thread_id === id)?.calls[0]?.preview).toEqual(intr.calls[0]!.preview);
    const hook = await receiver.waitFor(() => receiver.delivered().find((w) => w.body?.thread_id === id), 10_000, "approval.requested");
    expect(hook.body!.calls[0].preview).toEqual(intr.calls[0]!.preview);

    s.model.push({ text: "Refunded." });
    terminal(await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "pv1", approved: true }] }).collect(), "done");
    const audit = (await ops.audit(id)).entries;
    expect(audit).toMatchObject([{ call_id: "pv1", decision: "approved", preview_hash: expect.stringMatching(/^[0-9a-f]{64}$/), executed: { status: "ok" } }]);
    expect(audit[0]!.preview_hash).not.toBe(audit[0]!.args_hash);
  });

  it("goes stale when another refund of the order lands first: the call ends stale_preview, nothing is refunded, the model is told", async () => {
    const first = threadId("pv-first");
    const second = threadId("pv-second");
    const a = await refundAsked(first, "pv-a", 500);
    const b = await refundAsked(second, "pv-b", 200);
    // Both approvers saw the order before either refund.
    expect(a.calls[0]!.preview).toEqual(b.calls[0]!.preview);
    s.model.push({ text: "Refunded." });
    terminal(await ops.resume(second, b.interrupt_id, { decisions: [{ call_id: "pv-b", approved: true }] }).collect(), "done");
    s.model.push({ text: "The order changed; not refunded." });
    const late = await ops.resume(first, a.interrupt_id, { decisions: [{ call_id: "pv-a", approved: true }] }).collect();
    expect(only(late, "tool_result")[0]).toMatchObject({ call_id: "pv-a", status: "error", error: expect.stringMatching(/^stale_preview: order A-1004 has had \$2\.00 refunded since/) });
    expect(s.db.rows("refunds", "call_id = ?", "pv-a")).toEqual([]);
    expect(s.db.rows("refunds", "call_id = ?", "pv-b")).toHaveLength(1);
    const told = s.model.requests.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "pv-a");
    expect(told.content).toContain("stale_preview");
  });

  it("an edit takes the preview again for everyone to see, but the approval stays bound to the preview its approver was shown", async () => {
    const id = threadId("pv-edit");
    const intr = await refundAsked(id, "pv-e", 100);
    const shown = intr.calls[0]!.preview as { order_id: string; refunded_cents: number };
    expect(shown.refunded_cents).toBeGreaterThan(0);
    s.model.push({ text: "Refunded." });
    // The amount edited on the card as shown: the order has not changed since, so it runs.
    const done = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "pv-e", approved: true, edited_args: { amount_cents: 90 } }] }).collect();
    expect(only(done, "tool_result")[0]).toMatchObject({ call_id: "pv-e", status: "ok", edited: true });
    expect(s.db.rows("refunds", "call_id = ?", "pv-e")).toMatchObject([{ order_id: shown.order_id, amount_cents: 90 }]);
    // The audit names the preview the approver saw, not one taken on the edit that nobody approving saw.
    const shownHash = s.db.rows<{ calls: string }>("interrupts", "interrupt_id = ?", intr.interrupt_id)[0]!.calls;
    const [row] = (await ops.audit(id)).entries;
    expect(row).toMatchObject({ decision: "edited", version: 1, preview_hash: (JSON.parse(shownHash) as Array<{ preview_hash: string }>)[0]!.preview_hash });
  });

  it("an edit to another order does not carry the approval over to a preview its approver never saw: stale_preview, nothing refunded", async () => {
    const id = threadId("pv-edit-other");
    const intr = await refundAsked(id, "pv-o", 100);
    s.model.push({ text: "Not refunded." });
    const done = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "pv-o", approved: true, edited_args: { order_id: "A-1001" } }] }).collect();
    expect(only(done, "tool_result")[0]).toMatchObject({ call_id: "pv-o", status: "error", error: "stale_preview: the approval was given on order A-1004, not A-1001" });
    expect(s.db.rows("refunds", "call_id = ?", "pv-o")).toEqual([]);
  });
});
