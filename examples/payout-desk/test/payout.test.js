// @ts-check
// The desk's own tools through tollgate's gate, with no provider and no key: a scripted model asks
// for the payout, Sam cannot approve his own request, Pat approves it, and it is paid once.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createTollgate, loadConfig, silentLogger } from "tollgate";
import { TollgateClient } from "tollgate/client";
import { ScriptedChatModel } from "tollgate/testing";
import { DESK_PROMPT } from "../prompt.js";
import { payoutDeskTools } from "../tools.js";

const IBAN = "DE89370400440532013000";

// What a model would do, as rules: the user's words → tool calls; the tools' results → what next.
const model = new ScriptedChatModel({
  rules: [{
    when: /pay (C-\d+) .* into (\w+)/i,
    // First the read-only lookup, which runs at once…
    reply: ({ match }) => ({ toolCalls: [{ name: "lookup_customer", args: { customer_id: match[1] } }] }),
    // …then the payout of the balance it found, which waits at the gate; then a word on the result.
    then: ({ match, toolResults: [lookup, payout] }) => {
      if (payout) return `Paid: ${JSON.parse(payout.text).payout_id}.`;
      const { balance_cents } = JSON.parse(lookup.text);
      return {
        text: "Paying that out once a second person approves.",
        toolCalls: [{ name: "send_payout", args: { customer_id: match[1], amount_cents: balance_cents, iban: match[2] } }],
      };
    },
  }],
});

test("a payout waits for a second person, then is paid once", async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "payout-desk-test-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    AUTH_TOKENS: JSON.stringify({ "tok-sam-000001": { sub: "sam", roles: ["user"] }, "tok-pat-000001": { sub: "pat", roles: ["approver"] } }),
  });
  const payouts = new Map();
  const tollgate = await createTollgate({ config, log: silentLogger, model, tools: () => payoutDeskTools(payouts), systemPrompt: DESK_PROMPT });
  t.after(async () => {
    await tollgate.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  // The typed client, talking to the app in-process: no port, no socket.
  /** @param {string} token */
  const as = (token) => new TollgateClient({ baseUrl: "http://localhost", token, fetch: async (url, init) => tollgate.app.request(url, init) });
  const sam = as("tok-sam-000001");
  const pat = as("tok-pat-000001");

  const asked = await sam.run("payout-1", `Pay C-100 her balance into ${IBAN}`).collect();
  assert.ok(asked.some((e) => e.type === "token"), "the model's words stream as tokens");
  const gate = asked.at(-1);
  assert.ok(gate?.type === "interrupt", `the run stops at the gate, not at ${gate?.type}`);
  assert.deepEqual(gate.calls.map((c) => [c.name, c.args]), [["send_payout", { customer_id: "C-100", amount_cents: 12_500, iban: "***" }]]);
  assert.equal(payouts.size, 0, "nothing is paid before the approval");

  const decisions = [{ call_id: gate.calls[0].call_id, approved: true }];
  await assert.rejects(sam.resume("payout-1", gate.interrupt_id, { decisions }).collect(), { code: "forbidden" }, "four eyes");
  const approved = await pat.resume("payout-1", gate.interrupt_id, { decisions }).collect();
  const done = approved.at(-1);
  assert.ok(done?.type === "done", `the run completes, not ${done?.type}`);
  assert.equal(done.message, "Paid: P-1.");
  assert.deepEqual([...payouts.values()], [{ payout_id: "P-1", customer_id: "C-100", amount_cents: 12_500, iban_last4: "3000" }]);
  assert.ok(!JSON.stringify([asked, approved]).includes(IBAN), "the IBAN is masked in every event");
});
