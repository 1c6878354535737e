// @ts-check
// The supervisor graph through tollgate's gate, with no provider and no key: a refund asked of the
// billing sub-agent waits one level down; the requester cannot approve it, an approver can (and
// lowers it); it runs once. A shipping question never stops. Rejected and cancelled refunds never run.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createTollgate, loadConfig, silentLogger } from "tollgate";
import { TollgateClient } from "tollgate/client";
import { ScriptedChatModel } from "tollgate/testing";
import { supportGraph } from "../graph.js";
import { billingTools, shippingTools } from "../tools.js";

const CARD = "4242424242424242";

// What a model would do, as rules: the user's words → tool calls; the tools' results → what next.
const model = new ScriptedChatModel({
  rules: [
    {
      when: /refund (INV-\d+)/i,
      reply: ({ match }) => ({ text: "Let me look at that invoice.", toolCalls: [{ name: "lookup_invoice", args: { invoice_id: match[1] } }] }),
      then: ({ match, toolResults: [lookup, refund] }) => {
        if (refund) return refund.text.startsWith("Rejected") ? "The refund was not approved." : `Refunded: ${JSON.parse(refund.text.split("\n").at(-1) ?? "{}").refund_id}.`;
        return { toolCalls: [{ name: "refund_invoice", args: { invoice_id: match[1], amount_cents: JSON.parse(lookup.text).amount_cents } }] };
      },
    },
    {
      when: /where is (O-\d+)/i,
      reply: ({ match }) => ({ toolCalls: [{ name: "track_parcel", args: { order_id: match[1] } }] }),
      then: ({ toolResults: [track] }) => `It is ${JSON.parse(track.text).status}, due ${JSON.parse(track.text).eta}.`,
    },
  ],
});

test("the supervisor's billing sub-agent waits at the gate one level down; shipping never stops", async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "support-supervisor-test-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    AUTH_TOKENS: JSON.stringify({ "tok-sam-000001": { sub: "sam", roles: ["user"] }, "tok-pat-000001": { sub: "pat", roles: ["approver"] } }),
  });
  const refunds = new Map();
  const graph = supportGraph({ model, billing: billingTools(refunds), shipping: shippingTools() });
  const tollgate = await createTollgate({ config, log: silentLogger, graphs: { support: graph } });
  t.after(async () => {
    await tollgate.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  /** @param {string} token */
  const as = (token) => new TollgateClient({ baseUrl: "http://localhost", token, fetch: async (url, init) => tollgate.app.request(url, init) });
  const sam = as("tok-sam-000001");
  const pat = as("tok-pat-000001");
  assert.deepEqual(await sam.listGraphs(), { items: [{ graph_id: "support", description: null }] });

  // Shipping: read-only, streams and completes.
  const shipping = await sam.run("ship-1", "Where is O-5?").collect();
  assert.equal(shipping.at(-1)?.type, "done");
  assert.ok(shipping.some((e) => e.type === "token"), "the sub-agent's words stream as tokens");

  // Billing: the lookup runs at once (the card masked), the refund waits.
  const asked = await sam.run("bill-1", "Please refund INV-7").collect();
  const gate = asked.at(-1);
  assert.ok(gate?.type === "interrupt", `the run stops at the gate, not at ${gate?.type}`);
  assert.deepEqual(gate.calls.map((c) => [c.name, c.args, c.policy]), [["refund_invoice", { invoice_id: "INV-7", amount_cents: 4_200 }, "approver"]]);
  assert.equal(refunds.size, 0, "nothing is refunded before the approval");
  assert.ok(!JSON.stringify(asked).includes(CARD), "the card is masked in every event");

  const call_id = gate.calls[0].call_id;
  await assert.rejects(sam.resume("bill-1", gate.interrupt_id, { decisions: [{ call_id, approved: true }] }).collect(), { code: "forbidden" }, "four eyes");
  const approved = await pat.resume("bill-1", gate.interrupt_id, { decisions: [{ call_id, approved: true, edited_args: { amount_cents: 2_000 } }] }).collect();
  assert.equal(approved.at(-1)?.type, "done");
  assert.deepEqual([...refunds.values()], [{ refund_id: "R-1", invoice_id: "INV-7", amount_cents: 2_000 }]);
  const view = await sam.getThread("bill-1");
  assert.equal(view.graph_id, "support");
  assert.ok(!JSON.stringify(view).includes(CARD), "and in the thread's history");

  // A rejected refund, and a cancelled one, never run.
  const again = (await sam.run("bill-2", "refund INV-7").collect()).at(-1);
  assert.ok(again?.type === "interrupt");
  const rejected = await pat.resume("bill-2", again.interrupt_id, { decisions: [{ call_id: again.calls[0].call_id, approved: false, reason: "duplicate" }] }).collect();
  const refused = rejected.at(-1);
  assert.ok(refused?.type === "done", `the run completes, not ${refused?.type}`);
  assert.equal(refused.message, "The refund was not approved.");
  const third = (await sam.run("bill-3", "refund INV-7").collect()).at(-1);
  assert.ok(third?.type === "interrupt");
  assert.equal((await sam.cancel("bill-3")).cancelled, true);
  assert.equal((await sam.getThread("bill-3")).last_outcome, "cancelled");
  assert.equal(refunds.size, 1, "only the approved refund ran");
});
