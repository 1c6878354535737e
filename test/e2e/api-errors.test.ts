import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectNoStackTraces, type Stack, startStack, terminal, threadId } from "./support.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

const errorOf = (r: { status: number; json: any }) => [r.status, r.json?.error?.code];

/** Brings a thread to an open interrupt on a refund and returns the interrupt. */
async function interruptOn(id: string, callId: string, tool = "refund_order", args: object = { order_id: "A-1001", amount_cents: 100, reason: "r" }) {
  s.model.push({ toolCalls: [{ id: callId, name: tool, args }] });
  return terminal(await s.client.run(id, "refund").collect(), "interrupt");
}

describe("the contract's errors, sent as JSON before any stream", () => {
  it("healthz and unknown routes", async () => {
    expect(await call(s.server.url, "GET", "/healthz")).toMatchObject({ status: 200, json: { ok: true } });
    expect(errorOf(await call(s.server.url, "GET", "/nope"))).toEqual([404, "not_found"]);
  });

  it("POST /threads: server-made id, client id, thread_exists, invalid ids and bodies", async () => {
    const made = await call(s.server.url, "POST", "/threads");
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ status: "idle" });
    expect(made.json.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    const id = threadId("mine");
    expect(await call(s.server.url, "POST", "/threads", { thread_id: id, metadata: { user: "u1" } })).toMatchObject({
      status: 201,
      json: { thread_id: id, status: "idle" },
    });
    expect(errorOf(await call(s.server.url, "POST", "/threads", { thread_id: id }))).toEqual([409, "thread_exists"]);
    expect(errorOf(await call(s.server.url, "POST", "/threads", { thread_id: "has space" }))).toEqual([400, "invalid_request"]);
    expect(errorOf(await call(s.server.url, "POST", "/threads", { thread_id: "x".repeat(129) }))).toEqual([400, "invalid_request"]);
    expect(errorOf(await call(s.server.url, "POST", "/threads", "{not json"))).toEqual([400, "invalid_request"]);
  });

  it("GET /threads/:id of an unknown thread is thread_not_found; a new thread has no outcome yet", async () => {
    expect(errorOf(await call(s.server.url, "GET", `/threads/${threadId("ghost")}`))).toEqual([404, "thread_not_found"]);
    const id = threadId("fresh");
    await call(s.server.url, "POST", "/threads", { thread_id: id });
    expect((await call(s.server.url, "GET", `/threads/${id}`)).json).toEqual({
      thread_id: id,
      graph_id: "agent",
      status: "idle",
      last_outcome: null,
      owner: "anonymous",
      messages: [],
      pending: null,
    });
  });

  it("POST …/runs validates its body", async () => {
    const id = threadId("runs-bad");
    const path = `/threads/${id}/runs`;
    for (const body of ["{", {}, { message: "" }, { message: "   " }, { message: 42 }, { message: "x".repeat(32 * 1024 + 1) }, { message: "hi", on_disconnect: "later" }]) {
      const r = await call(s.server.url, "POST", path, body);
      expect(errorOf(r), JSON.stringify(body).slice(0, 40)).toEqual([400, "invalid_request"]);
      expect(r.json.error.message).toEqual(expect.any(String));
    }
    // exactly at the limit is fine
    s.model.push({ text: "long read" });
    const ok = await s.client.run(id, "é".repeat(16 * 1024)).collect();
    terminal(ok, "done");
  });

  it("POST …/runs creates the thread, then thread_busy while a run is in flight", async () => {
    const id = threadId("busy");
    s.model.push({ hang: true, text: "thinking" });
    const first = s.client.run(id, "take your time");
    const it1 = first[Symbol.asyncIterator]();
    expect((await it1.next()).value).toMatchObject({ type: "token", text: "thinking" });
    expect(errorOf(await call(s.server.url, "POST", `/threads/${id}/runs`, { message: "me too" }))).toEqual([409, "thread_busy"]);
    expect((await s.client.getThread(id)).status).toBe("running");
    await s.client.cancel(id);
    first.stop();
  });

  it("POST …/runs on a thread waiting for approval is awaiting_approval", async () => {
    const id = threadId("awaiting");
    await interruptOn(id, "aw1");
    expect(errorOf(await call(s.server.url, "POST", `/threads/${id}/runs`, { message: "and another thing" }))).toEqual([409, "awaiting_approval"]);
  });

  it("POST …/resume: thread_not_found, not_waiting, invalid_request, unknown_call, stale_interrupt", async () => {
    const body = { interrupt_id: "x", decisions: [] };
    expect(errorOf(await call(s.server.url, "POST", `/threads/${threadId("nobody")}/resume`, body))).toEqual([404, "thread_not_found"]);

    const idle = threadId("idle");
    await call(s.server.url, "POST", "/threads", { thread_id: idle });
    expect(errorOf(await call(s.server.url, "POST", `/threads/${idle}/resume`, body))).toEqual([409, "not_waiting"]);

    const id = threadId("res");
    const a = await interruptOn(id, "st1");
    const path = `/threads/${id}/resume`;
    for (const bad of ["{", {}, { interrupt_id: a.interrupt_id }, { interrupt_id: a.interrupt_id, decisions: [{ call_id: "st1" }] },
      { interrupt_id: a.interrupt_id, decisions: [{ call_id: "st1", approved: true }, { call_id: "st1", approved: false }] }]) {
      expect(errorOf(await call(s.server.url, "POST", path, bad)), JSON.stringify(bad)).toEqual([400, "invalid_request"]);
    }
    expect(errorOf(await call(s.server.url, "POST", path, { interrupt_id: a.interrupt_id, decisions: [{ call_id: "nope", approved: true }] }))).toEqual([422, "unknown_call"]);
    expect(errorOf(await call(s.server.url, "POST", path, { interrupt_id: "not-the-one", decisions: [] }))).toEqual([409, "stale_interrupt"]);

    // Decide A by rejecting it; the model asks again, which opens B. A is now stale.
    s.model.push({ toolCalls: [{ id: "st2", name: "refund_order", args: { order_id: "A-1001", amount_cents: 50, reason: "r" } }] });
    const b = terminal(await s.client.resume(id, a.interrupt_id, { decisions: [{ call_id: "st1", approved: false }] }).collect(), "interrupt");
    expect(b.interrupt_id).not.toBe(a.interrupt_id);
    expect(errorOf(await call(s.server.url, "POST", path, { interrupt_id: a.interrupt_id, decisions: [{ call_id: "st1", approved: true }] }))).toEqual([409, "stale_interrupt"]);
    expect(s.db.rows("refunds", "call_id IN ('st1', 'st2')")).toHaveLength(0);

    // Reject B; the model is done. Now nothing is open: not_waiting.
    s.model.push({ text: "fine" });
    terminal(await s.client.resume(id, b.interrupt_id, { decisions: [{ call_id: "st2", approved: false }] }).collect(), "done");
    expect(errorOf(await call(s.server.url, "POST", path, { interrupt_id: b.interrupt_id, decisions: [] }))).toEqual([409, "not_waiting"]);
  });

  it("POST …/resume without Accept: text/event-stream answers 202 {run_id}; the run goes on and can be watched", async () => {
    const id = threadId("detached");
    const a = await interruptOn(id, "dt1");
    s.model.push({ text: "refunded in the background" });
    const r = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: a.interrupt_id, decisions: [{ call_id: "dt1", approved: true }] });
    expect(r.status).toBe(202);
    expect(r.json.run_id).toEqual(expect.any(String));
    const watched = await s.client.stream(id).collect();
    expect(terminal(watched, "done").run_id).toBe(r.json.run_id);
    expect(s.db.rows("refunds", "call_id = ?", "dt1")).toHaveLength(1);
  });

  it("POST …/resume while that resume runs is thread_busy; its slow tool runs once", async () => {
    const id = threadId("resume-busy");
    const a = await interruptOn(id, "sb1", "slow_refund", { order_id: "A-1005", amount_cents: 10, delay_ms: 300 });
    s.model.push({ text: "done slowly" });
    const decisions = [{ call_id: "sb1", approved: true }];
    // The first resume has passed the gate when it answers 202; its slow tool is still running.
    const first = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: a.interrupt_id, decisions });
    expect(first.status).toBe(202);
    const second = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: a.interrupt_id, decisions });
    expect(errorOf(second)).toEqual([409, "thread_busy"]);
    expect(terminal(await s.client.stream(id).collect(), "done").run_id).toBe(first.json.run_id);
    expect(s.db.rows("refunds", "call_id = ?", "sb1")).toHaveLength(1);
  });
});
