import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb, type TestDb } from "../helpers/sqlite.js";
import { expectNoStackTraces, only, terminal, threadId, tokensText, types } from "./support.js";

// The offline demo: no model endpoint, no key. What a newcomer sees after `npm start`.
let server: ServerProcess;
let client: TollgateClient;
let db: TestDb;
beforeAll(async () => {
  server = await startServer({ MODEL: undefined, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, DEMO_TOKEN_DELAY_MS: "0" });
  client = new TollgateClient({ baseUrl: server.url });
  db = openDb(server.dataDir);
});
afterAll(async () => {
  expectNoStackTraces(server);
  db?.close();
  await server?.kill();
});

describe("MODEL=demo, offline", () => {
  it("seeds the five orders on first start", () => {
    expect(db.rows<{ order_id: string }>("orders").map((o) => o.order_id)).toEqual(["A-1001", "A-1002", "A-1003", "A-1004", "A-1005"]);
  });

  it("refund: lookup runs at once, the refund waits, approval runs it once", async () => {
    const id = threadId("demo-refund");
    const events = await client.run(id, "refund order A-1002 5 dollars").collect();
    const intr = terminal(events, "interrupt");
    expect(tokensText(events)).toContain("needs your approval");
    expect(types(events)).toEqual(["tool_call", "tool_call", "tool_result", "interrupt"]);
    expect(only(events, "tool_result")[0]).toMatchObject({ name: "lookup_order", status: "ok" });
    expect(intr.calls).toEqual([
      {
        call_id: expect.any(String),
        name: "refund_order",
        version: 1,
        args: { order_id: "A-1002", amount_cents: 500, reason: "Customer request" },
        policy: "approver",
        editable: true,
        args_schema: expect.objectContaining({ type: "object", properties: expect.objectContaining({ amount_cents: expect.any(Object) }) }),
        // The order as the approver should see it.
        preview: { order_id: "A-1002", status: "delivered", total_cents: 12000, refunded_cents: 0 },
      },
    ]);
    const resumed = await client.resume(id, intr.interrupt_id, { decisions: [{ call_id: intr.calls[0]!.call_id, approved: true }] }).collect();
    expect(terminal(resumed, "done").message).toBe("Done: refunded $5.00 on A-1002.");
    expect(db.rows("refunds", "call_id = ?", intr.calls[0]!.call_id)).toMatchObject([{ order_id: "A-1002", amount_cents: 500 }]);
  });

  it("lookup: answers from the order", async () => {
    const events = await client.run(threadId("demo-where"), "where is A-1001").collect();
    expect(terminal(events, "done").message).toBe(
      "Order A-1001 is shipped. Total $49.99, refunded so far $0.00. The customer's email address is on file.",
    );
    // The address is masked in the lookup's result, so the model's own words must not repeat it.
    expect(JSON.stringify(events)).not.toContain("ada@example.com");
  });

  it("email: rejected, nothing in the outbox, and the agent says so", async () => {
    const id = threadId("demo-email");
    const events = await client.run(id, "email the customer of A-1003 that it ships tomorrow").collect();
    const intr = terminal(events, "interrupt");
    // Recipient and body are personal data: masked for people, real for the tool.
    expect(intr.calls[0]).toMatchObject({ name: "send_email", args: { to: "***", subject: "About your order A-1003", body: "***" } });
    expect(JSON.stringify(events)).not.toContain("alan@example.com");
    const resumed = await client.resume(id, intr.interrupt_id, { decisions: [{ call_id: intr.calls[0]!.call_id, approved: false, reason: "wrong tone" }] }).collect();
    expect(terminal(resumed, "done").message).toBe("I did not send the email. Rejected: wrong tone");
    expect(db.countRows("outbox")).toBe(0);
  });

  it("email approved: the outbox has the real address and body; no event shows either", async () => {
    const id = threadId("demo-email-ok");
    const events = await client.run(id, "email the customer of A-1004 that we are sorry for the delay").collect();
    const intr = terminal(events, "interrupt");
    const resumed = await client.resume(id, intr.interrupt_id, { decisions: [{ call_id: intr.calls[0]!.call_id, approved: true }] }).collect();
    expect(terminal(resumed, "done").message).toBe("Sent: the email to the customer of A-1004 is in the outbox.");
    expect(db.rows("outbox", "call_id = ?", intr.calls[0]!.call_id)).toMatchObject([{ to: "edsger@example.com", body: "Hello, we are sorry for the delay" }]);
    const shown = JSON.stringify([events, resumed, await client.getThread(id)]);
    expect(shown).not.toContain("edsger@example.com");
    expect(shown).not.toContain("Hello, we are sorry for the delay");
  });

  it("email approved with a new recipient: sent to it, reported as sent, and the new address shown nowhere", async () => {
    const id = threadId("demo-email-edit");
    const events = await client.run(id, "email the customer of A-1002 that it ships tomorrow").collect();
    const intr = terminal(events, "interrupt");
    const callId = intr.calls[0]!.call_id;
    const resumed = await client.resume(id, intr.interrupt_id, { decisions: [{ call_id: callId, approved: true, edited_args: { to: "new-inbox@example.com" } }] }).collect();
    expect(terminal(resumed, "done").message).toBe("Sent: the email to the customer of A-1002 is in the outbox.");
    expect(only(resumed, "tool_result")[0]).toMatchObject({ status: "ok", edited: true });
    expect(db.rows("outbox", "call_id = ?", callId)).toMatchObject([{ to: "new-inbox@example.com" }]);
    expect(JSON.stringify([resumed, await client.getThread(id)])).not.toContain("new-inbox@example.com");
  });

  it("anything else: a short help text", async () => {
    expect(terminal(await client.run(threadId("demo-help"), "hello").collect(), "done").message).toMatch(/refund order A-1002/);
  });
});
