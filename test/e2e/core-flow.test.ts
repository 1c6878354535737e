import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNoStackTraces, only, type Stack, startStack, terminal, threadId, tokensText, toolMessagesSeen, types } from "./support.js";

// One server and one scripted model for the file; tests run in order and script their own turns.
let s: Stack;
beforeAll(async () => {
  s = await startStack({ MAX_ROUNDS: "3" });
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

describe("runs against an OpenAI-compatible model", () => {
  it("streams a text-only answer as tokens, then done", async () => {
    const id = threadId("text");
    s.model.push({ text: "Hello there, how can I help?" });
    const events = await s.client.run(id, "hi").collect();
    const done = terminal(events, "done");
    expect(types(events)).toEqual(["done"]);
    expect(tokensText(events)).toBe("Hello there, how can I help?");
    expect(done).toMatchObject({ outcome: "completed", message: "Hello there, how can I help?" });
    const view = await s.client.getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "completed", pending: null });
    expect(view.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "Hello there, how can I help?"],
    ]);
  });

  it("runs a read-only call at once and gives the model its result", async () => {
    const id = threadId("read");
    s.model.push({ toolCalls: [{ id: "r1", name: "lookup_order", args: { order_id: "A-1001" } }] }, { text: "It shipped." });
    const events = await s.client.run(id, "where is A-1001").collect();
    terminal(events, "done");
    expect(types(events)).toEqual(["tool_call", "tool_result", "done"]);
    expect(only(events, "tool_call")[0]).toMatchObject({ call_id: "r1", name: "lookup_order", needs_approval: false });
    const result = only(events, "tool_result")[0]!;
    expect(result).toMatchObject({ call_id: "r1", status: "ok" });
    expect(JSON.parse(result.output!)).toMatchObject({ order_id: "A-1001", status: "shipped", total_cents: 4999 });
    const second = s.model.requests.at(-1)!;
    expect(toolMessagesSeen(second.body).get("r1")).toContain('"order_id":"A-1001"');
  });

  it("stops an irreversible call at the gate and runs it once after approval", async () => {
    const id = threadId("approve");
    s.model.push({ toolCalls: [{ id: "p1", name: "refund_order", args: { order_id: "A-1002", amount_cents: 500, reason: "late" } }] });
    const events = await s.client.run(id, "refund A-1002 $5").collect();
    const intr = terminal(events, "interrupt");
    expect(types(events)).toEqual(["tool_call", "interrupt"]);
    expect(only(events, "tool_call")[0]).toMatchObject({ call_id: "p1", needs_approval: true });
    expect(intr).toMatchObject({ thread_id: id, calls: [{ call_id: "p1", name: "refund_order", args: { order_id: "A-1002", amount_cents: 500, reason: "late" } }] });
    expect(Date.parse(intr.expires_at)).toBeGreaterThan(Date.now());
    expect(s.db.rows("refunds", "call_id = ?", "p1")).toHaveLength(0);

    const view = await s.client.getThread(id);
    expect(view.status).toBe("waiting_human");
    expect(view.pending).toMatchObject({ interrupt_id: intr.interrupt_id, calls: intr.calls });

    s.model.push({ text: "Refunded." });
    const resumed = await s.client.resume(id, intr.interrupt_id, { decisions: [{ call_id: "p1", approved: true }] }).collect();
    terminal(resumed, "done");
    expect(types(resumed)).toEqual(["tool_result", "done"]);
    expect(only(resumed, "tool_result")[0]).toMatchObject({ call_id: "p1", status: "ok" });
    expect(s.db.rows("refunds", "call_id = ?", "p1")).toMatchObject([{ order_id: "A-1002", amount_cents: 500 }]);
    expect(await s.client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "completed", pending: null });
  });

  it("rejects with a reason: nothing runs and the model reads the reason", async () => {
    const id = threadId("reject");
    s.model.push({ toolCalls: [{ id: "q1", name: "refund_order", args: { order_id: "A-1004", amount_cents: 8900, reason: "x" } }] });
    const intr = terminal(await s.client.run(id, "refund all of A-1004").collect(), "interrupt");
    s.model.push({ text: "OK, no refund." });
    const resumed = await s.client.resume(id, intr.interrupt_id, { decisions: [{ call_id: "q1", approved: false, reason: "too much" }] }).collect();
    terminal(resumed, "done");
    expect(only(resumed, "tool_result")[0]).toMatchObject({ call_id: "q1", status: "rejected", error: "Rejected: too much" });
    expect(toolMessagesSeen(s.model.requests.at(-1)!.body).get("q1")).toBe("Rejected: too much");
    expect(s.db.rows("refunds", "call_id = ?", "q1")).toHaveLength(0);
  });

  it("decides a mixed batch call by call: read-only first, approve one, reject one by omission", async () => {
    const id = threadId("mixed");
    s.model.push({
      toolCalls: [
        { id: "m1", name: "lookup_order", args: { order_id: "A-1003" } },
        { id: "m2", name: "refund_order", args: { order_id: "A-1003", amount_cents: 100, reason: "sorry" } },
        { id: "m3", name: "send_email", args: { to: "alan@example.com", subject: "Sorry", body: "We refunded $1." } },
      ],
    });
    const events = await s.client.run(id, "refund A-1003 $1 and tell them").collect();
    const intr = terminal(events, "interrupt");
    expect(types(events)).toEqual(["tool_call", "tool_call", "tool_call", "tool_result", "interrupt"]);
    expect(only(events, "tool_result")[0]).toMatchObject({ call_id: "m1", status: "ok" });
    expect(intr.calls.map((c) => c.call_id)).toEqual(["m2", "m3"]);

    s.model.push({ text: "Refunded; no email sent." });
    const resumed = await s.client.resume(id, intr.interrupt_id, { decisions: [{ call_id: "m2", approved: true }] }).collect();
    terminal(resumed, "done");
    expect(only(resumed, "tool_result").map((e) => [e.call_id, e.status, e.error])).toEqual([
      ["m2", "ok", undefined],
      ["m3", "rejected", "Rejected: no decision"],
    ]);
    expect(s.db.rows("refunds", "call_id = ?", "m2")).toHaveLength(1);
    expect(s.db.rows("outbox", "call_id = ?", "m3")).toHaveLength(0);
    const seen = toolMessagesSeen(s.model.requests.at(-1)!.body);
    expect([...seen.keys()]).toEqual(["m1", "m2", "m3"]);
  });

  it("a model server that reuses call ids (call_0 each turn) still gets each approved call run", async () => {
    const id = threadId("reused-ids");
    const ask = (cents: number) => ({ toolCalls: [{ id: "call_0", name: "refund_order", args: { order_id: "A-1005", amount_cents: cents, reason: "r" } }] });
    for (const cents of [500, 700]) {
      s.model.push(ask(cents));
      const intr = terminal(await s.client.run(id, `refund ${cents}`).collect(), "interrupt");
      s.model.push({ text: "done" });
      const resumed = await s.client.resume(id, intr.interrupt_id, { decisions: [{ call_id: intr.calls[0]!.call_id, approved: true }] }).collect();
      expect(only(resumed, "tool_result")[0]).toMatchObject({ status: "ok" });
      expect(JSON.parse(only(resumed, "tool_result")[0]!.output!)).toMatchObject({ amount_cents: cents });
    }
    const calls = (await s.client.getThread(id)).messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.id);
    expect(new Set(calls).size).toBe(2);
    expect(s.db.rows<{ amount_cents: number }>("refunds", "order_id = 'A-1005' AND call_id IN (?, ?)", ...calls).map((r) => r.amount_cents)).toEqual([500, 700]);
  });

  it("reports an unknown tool, bad arguments, unparsable arguments and a throwing tool, then goes on", async () => {
    const id = threadId("bad-calls");
    s.model.push({
      toolCalls: [
        { id: "b1", name: "launch_rocket", args: {} },
        { id: "b2", name: "refund_order", args: { order_id: "A-1001", amount_cents: -5, reason: "x" } },
        { id: "b3", name: "lookup_order", args: '{"order_id": "secret-ish-A-9", }' },
        { id: "b4", name: "explode", args: { message: "disk on fire" } },
      ],
    }, { text: "Some calls failed." });
    const events = await s.client.run(id, "do odd things").collect();
    terminal(events, "done");
    expect(only(events, "tool_call").map((e) => e.needs_approval)).toEqual([false, false, false, false]);
    const results = new Map(only(events, "tool_result").map((e) => [e.call_id, e]));
    expect(results.get("b1")).toMatchObject({ status: "error", error: "Tool 'launch_rocket' not found" });
    expect(results.get("b2")).toMatchObject({ status: "invalid_args" });
    expect(results.get("b2")!.error).toMatch(/amount_cents/);
    expect(results.get("b3")).toMatchObject({ status: "invalid_args" });
    // The broken text is not echoed: it may hold a sensitive value, and people see this error.
    expect(JSON.stringify([events, await s.client.getThread(id)])).not.toContain("secret-ish-A-9");
    expect(results.get("b4")).toMatchObject({ status: "error", error: "disk on fire" });
    const seen = toolMessagesSeen(s.model.requests.at(-1)!.body);
    expect(seen.get("b1")).toContain("Tool 'launch_rocket' not found");
    expect(seen.get("b4")).toContain("disk on fire");
    expect(s.db.countRows("refunds")).toBe(s.db.rows("refunds", "call_id IS NOT NULL").length);
    expect(s.db.rows("refunds", "call_id = ?", "b2")).toHaveLength(0);
  });

  it("ends with max_rounds after MAX_ROUNDS model calls", async () => {
    const id = threadId("rounds");
    const before = s.model.requests.length;
    for (let i = 0; i < 3; i++) s.model.push({ toolCalls: [{ id: `loop${i}`, name: "lookup_order", args: { order_id: "A-1001" } }] });
    const events = await s.client.run(id, "loop forever").collect();
    expect(terminal(events, "done").outcome).toBe("max_rounds");
    expect(s.model.requests.length - before).toBe(3);
    expect(await s.client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "max_rounds" });
  });

  it("turns a failing model endpoint into model_error and keeps the thread usable", async () => {
    const id = threadId("down");
    s.model.push({ status: 500 });
    const events = await s.client.run(id, "hello?").collect();
    const err = terminal(events, "error");
    expect(err.code).toBe("model_error");
    expect(err.message).not.toMatch(/\n\s+at /); // no stack traces
    expect(await s.client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "error" });

    s.model.push({ garbage: "this is not json" });
    expect(terminal(await s.client.run(id, "again?").collect(), "error").code).toBe("model_error");

    // A stream that stops before the model finished is a failure, not a short answer.
    s.model.push({ truncated: true, text: "Half an ans" });
    const cut = await s.client.run(id, "and again?").collect();
    expect(terminal(cut, "error").code).toBe("model_error");

    s.model.push({ text: "Back online." });
    const ok = await s.client.run(id, "and now?").collect();
    expect(terminal(ok, "done").message).toBe("Back online.");
    const roles = (await s.client.getThread(id)).messages.map((m) => m.role);
    expect(roles).toEqual(["user", "user", "user", "user", "assistant"]);
  });
});
