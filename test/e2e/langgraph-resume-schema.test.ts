/**
 * A resume sent the LangGraph way is held to `POST …/resume`'s schema by the run service's one
 * door, as tollgate's own is: a resume that does not fit is `400 invalid_request` naming what,
 * nothing is decided, and the interrupt still waits for a resume that fits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectNoStackTraces, type Stack, startStack, threadId } from "./support.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

const resumeWith = (id: string, resume: unknown) => call(s.server.url, "POST", `/langgraph/threads/${id}/runs/wait`, { assistant_id: "agent", command: { resume } });

describe("LangGraph's resume at the run service's door", () => {
  it("a resume outside the schema is refused with what does not fit, decides nothing, and one that fits runs the call", async () => {
    const id = threadId("lg-schema");
    s.model.push({ toolCalls: [{ id: "lg-schema-r1", name: "refund_order", args: { order_id: "A-1001", amount_cents: 500, reason: "late" } }] });
    expect((await call(s.server.url, "POST", "/langgraph/threads", { thread_id: id })).status).toBe(200);
    const asked = await call(s.server.url, "POST", `/langgraph/threads/${id}/runs/wait`, { assistant_id: "agent", input: { messages: [{ type: "human", content: "refund my order" }] } });
    expect(asked.status).toBe(200);
    const interruptId: string = (await call(s.server.url, "GET", `/threads/${id}`)).json.pending.interrupt_id;

    // Tollgate's own form, through LangGraph's command: one call named twice.
    const twice = await resumeWith(id, { interrupt_id: interruptId, decisions: [{ call_id: "lg-schema-r1", approved: true }, { call_id: "lg-schema-r1", approved: true }] });
    expect([twice.status, twice.json.error.code, twice.json.error.message]).toEqual([400, "invalid_request", "decisions: two decisions name the same call_id"]);
    // The HITL middleware's form: a reject whose reason is past the schema's 2,000 characters.
    const long = await resumeWith(id, { decisions: [{ type: "reject", message: "x".repeat(2001) }] });
    expect([long.status, long.json.error.code]).toEqual([400, "invalid_request"]);
    expect(long.json.error.message).toMatch(/^decisions\.0\.reason: /);

    expect(s.db.rows("refunds", "call_id = ?", "lg-schema-r1")).toHaveLength(0);
    expect((await call(s.server.url, "GET", `/threads/${id}`)).json.pending.interrupt_id).toBe(interruptId);
    s.model.push({ text: "Refunded." });
    const fits = await resumeWith(id, { decisions: [{ type: "approve" }] });
    expect(fits.status).toBe(200);
    expect(s.db.rows("refunds", "call_id = ?", "lg-schema-r1")).toHaveLength(1);
  });
});
