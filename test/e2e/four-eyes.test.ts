import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { AuditEntry } from "../../src/protocol/index.js";
import { call, expectNoStackTraces, only, type Stack, startStack, terminal, threadId, toolMessagesSeen } from "./support.js";

// A requester (alice) and an approver (ops) on one server: the four-eyes flow, edits and the audit.
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
  "tok-root-00001": { sub: "root", roles: ["admin"] },
};
const AS_ALICE = { authorization: "Bearer tok-alice-0001" };
const AS_OPS = { authorization: "Bearer tok-ops-000001" };
const AS_ROOT = { authorization: "Bearer tok-root-00001" };

let s: Stack;
let ops: TollgateClient;
beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS: JSON.stringify(TOKENS) });
  ops = new TollgateClient({ baseUrl: s.server.url, token: "tok-ops-000001" });
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

const REFUND = { order_id: "A-1002", amount_cents: 500, reason: "late" };

/** Alice asks for a refund (and optionally more calls); the stream ends at the gate. */
async function aliceAsks(id: string, calls: Array<{ id: string; name: string; args: object }>) {
  s.model.push({ toolCalls: calls });
  return terminal(await s.client.run(id, "refund please").collect(), "interrupt");
}

const resume = (id: string, who: Record<string, string>, body: object) =>
  call(s.server.url, "POST", `/threads/${id}/resume`, body, who);

/** What must not have moved after a refused decision. */
function untouched(id: string, interruptId: string) {
  expect(s.db.rows("interrupts", "interrupt_id = ?", interruptId)).toMatchObject([{ status: "waiting_human" }]);
  expect(s.db.rows("threads", "thread_id = ?", id)).toMatchObject([{ status: "waiting_human", open_interrupt_id: interruptId }]);
  expect(s.db.rows("audit", "thread_id = ?", id)).toEqual([]);
  expect(s.db.rows("ledger", "thread_id = ?", id)).toEqual([]);
}

describe("four eyes", () => {
  it("the owner of a refund cannot approve it; an approver can; it runs once", async () => {
    const id = threadId("fe-refund");
    const intr = await aliceAsks(id, [{ id: "fr1", name: "refund_order", args: REFUND }]);
    expect(intr.calls[0]).toMatchObject({ policy: "approver", editable: true });

    const own = await resume(id, AS_ALICE, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "fr1", approved: true }] });
    expect([own.status, own.json.error.code]).toEqual([403, "forbidden"]);
    expect(own.json.error.message).toMatch(/four eyes/i);
    // Rejecting is deciding too: the owner's way out is cancel.
    const ownReject = await resume(id, AS_ALICE, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "fr1", approved: false }] });
    expect(ownReject.status).toBe(403);
    untouched(id, intr.interrupt_id);

    // The approver finds it in the inbox, requested by alice.
    const inbox = await ops.approvals();
    expect(inbox.items).toContainEqual(expect.objectContaining({ thread_id: id, interrupt_id: intr.interrupt_id, requested_by: "alice" }));

    s.model.push({ text: "Refunded." });
    const events = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "fr1", approved: true }] }).collect();
    expect(terminal(events, "done").message).toBe("Refunded.");
    expect(s.db.rows("refunds", "call_id = ?", "fr1")).toMatchObject([{ amount_cents: 500 }]);
    expect((await ops.approvals()).items.map((i) => i.thread_id)).not.toContain(id);
    // The approver keeps read access to what it decided.
    expect((await ops.getThread(id)).owner).toBe("alice");
  });

  it("whoever asked for a refund cannot approve it, even an admin writing on someone else's thread", async () => {
    const id = threadId("fe-admin");
    s.model.push({ text: "hi" });
    terminal(await s.client.run(id, "hello").collect(), "done"); // alice's thread
    s.model.push({ toolCalls: [{ id: "fa9", name: "refund_order", args: REFUND }] });
    const root = new TollgateClient({ baseUrl: s.server.url, token: "tok-root-00001" });
    const intr = terminal(await root.run(id, "refund it").collect(), "interrupt");
    const self = await resume(id, AS_ROOT, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "fa9", approved: true }] });
    expect([self.status, self.json.error.code]).toEqual([403, "forbidden"]);
    untouched(id, intr.interrupt_id);
    expect((await root.approvals()).items.map((i) => i.thread_id)).not.toContain(id);
    s.model.push({ text: "Refunded." });
    terminal(await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "fa9", approved: true }] }).collect(), "done");
    expect(s.db.rows("refunds", "call_id = ?", "fa9")).toHaveLength(1);
  });

  it("the owner can always cancel; the approver cannot", async () => {
    const id = threadId("fe-cancel");
    const intr = await aliceAsks(id, [{ id: "fc1", name: "refund_order", args: REFUND }]);
    const byOps = await call(s.server.url, "POST", `/threads/${id}/cancel`, undefined, AS_OPS);
    expect([byOps.status, byOps.json.error.code]).toEqual([403, "forbidden"]);
    untouched(id, intr.interrupt_id);
    expect(await s.client.cancel(id)).toMatchObject({ cancelled: true, status: "idle" });
    expect(s.db.rows("refunds", "call_id = ?", "fc1")).toEqual([]);
    const audit = await s.client.audit(id);
    expect(audit.entries).toEqual([
      expect.objectContaining({ call_id: "fc1", tool: "refund_order", decision: "cancelled", by: "alice" }),
    ]);
    expect(audit.entries[0]!.executed).toBeUndefined();
  });
});

describe("edit before approve", () => {
  it("an approver halves a refund: it runs once with the edited amount, the model is told which key changed", async () => {
    const id = threadId("fe-edit");
    const intr = await aliceAsks(id, [{ id: "fe1", name: "refund_order", args: REFUND }]);
    s.model.push({ text: "Refunded half." });
    const events = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "fe1", approved: true, edited_args: { amount_cents: 250 } }] }).collect();
    terminal(events, "done");
    expect(only(events, "tool_result")).toEqual([expect.objectContaining({ call_id: "fe1", status: "ok", edited: true })]);
    expect(s.db.rows("refunds", "call_id = ?", "fe1")).toMatchObject([{ order_id: "A-1002", amount_cents: 250, reason: "late" }]);
    const told = toolMessagesSeen(s.model.requests.at(-1)!.body).get("fe1")!;
    expect(told.startsWith("Approved with edits: amount_cents")).toBe(true);
    expect(told).not.toContain("250\n"); // names the key, not its value, in the header line
    const view = await ops.getThread(id);
    expect(view.messages.find((m) => m.role === "tool" && m.tool_call_id === "fe1")).toMatchObject({ status: "ok", edited: true });

    const [entry] = (await ops.audit(id)).entries as [AuditEntry];
    expect(entry).toMatchObject({ call_id: "fe1", decision: "edited", by: "ops", executed: { status: "ok" } });
    expect(entry.edited_args_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(entry.edited_args_hash).not.toBe(entry.args_hash);
  });

  it("an edit that changes nothing is a plain approval", async () => {
    const id = threadId("fe-same");
    const intr = await aliceAsks(id, [{ id: "fs1", name: "refund_order", args: REFUND }]);
    s.model.push({ text: "ok" });
    const events = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "fs1", approved: true, edited_args: { amount_cents: 500 } }] }).collect();
    expect(only(events, "tool_result")[0]!.edited).toBeUndefined();
    expect((await ops.audit(id)).entries).toMatchObject([{ decision: "approved", by: "ops" }]);
    expect(s.db.rows("refunds", "call_id = ?", "fs1")).toMatchObject([{ amount_cents: 500 }]);
  });

  it("invalid edits are refused with 400 and decide nothing", async () => {
    const id = threadId("fe-bad");
    const intr = await aliceAsks(id, [
      { id: "fb1", name: "refund_order", args: REFUND },
      { id: "fb2", name: "slow_refund", args: { order_id: "A-1001", amount_cents: 1, delay_ms: 0 } },
    ]);
    const bad = [
      { call_id: "fb1", approved: true, edited_args: { amount_cents: "half" } }, // wrong type
      { call_id: "fb1", approved: true, edited_args: { amount_cents: -5 } }, // fails the schema
      { call_id: "fb1", approved: true, edited_args: { currency: "EUR" } }, // unknown key
      { call_id: "fb1", approved: true, edited_args: { reason: "***" } }, // the mask is not a value
      { call_id: "fb1", approved: false, edited_args: { amount_cents: 1 } }, // edits only with approval
      { call_id: "fb2", approved: true, edited_args: { amount_cents: 2 } }, // tool not editable
      // Reserved names, as own keys of the JSON a client sends (an object literal would set the prototype).
      { call_id: "fb1", approved: true, edited_args: JSON.parse('{"__proto__": {"amount_cents": 1}}') },
      { call_id: "fb1", approved: true, edited_args: JSON.parse('{"amount_cents": 1, "__proto__": {}}') },
      { call_id: "fb1", approved: true, edited_args: { constructor: { amount_cents: 1 } } },
      { call_id: "fb1", approved: true, edited_args: { prototype: 1 } },
    ];
    for (const d of bad) {
      const r = await resume(id, AS_OPS, { interrupt_id: intr.interrupt_id, decisions: [d, { call_id: d.call_id === "fb1" ? "fb2" : "fb1", approved: true }] });
      expect([r.status, r.json.error?.code], JSON.stringify(d)).toEqual([400, "invalid_request"]);
      untouched(id, intr.interrupt_id);
    }
    expect(s.db.countRows("refunds")).toBe(s.db.rows("refunds", "call_id NOT IN ('fb1', 'fb2')").length);
  });
});

describe("the audit trail", () => {
  it("records approve, reject and no decision, by whom, with keyed hashes and how each call ran", async () => {
    const id = threadId("fe-audit");
    const intr = await aliceAsks(id, [
      { id: "fa1", name: "refund_order", args: REFUND },
      { id: "fa2", name: "refund_order", args: { ...REFUND, amount_cents: 900 } },
      { id: "fa3", name: "send_email", args: { to: "ada@example.com", subject: "s", body: "b" } },
    ]);
    s.model.push({ text: "Partly done." });
    await ops.resume(id, intr.interrupt_id, { decisions: [
      { call_id: "fa1", approved: true },
      { call_id: "fa2", approved: false, reason: "too much" },
    ] }).collect();
    const entries = (await s.client.audit(id)).entries;
    expect(entries).toMatchObject([
      { call_id: "fa1", tool: "refund_order", decision: "approved", by: "ops", reason: null, executed: { status: "ok" } },
      { call_id: "fa2", decision: "rejected", by: "ops", reason: "too much" },
      { call_id: "fa3", tool: "send_email", decision: "no_decision", by: "ops", reason: "no decision" },
    ]);
    expect(entries[1]!.executed).toBeUndefined();
    expect(entries[2]!.executed).toBeUndefined();
    for (const e of entries) {
      expect(e.interrupt_id).toBe(intr.interrupt_id);
      expect(Date.parse(e.at)).toBeGreaterThan(0);
      expect(e.args_hash).toMatch(/^[0-9a-f]{64}$/);
    }
    // Keyed: not the plain sha256 a reader could recompute from a guessed value.
    const { createHash } = await import("node:crypto");
    const { canonicalJson } = await import("../../src/tools/index.js");
    expect(entries[0]!.args_hash).not.toBe(createHash("sha256").update(canonicalJson(REFUND)).digest("hex"));
  });
});
