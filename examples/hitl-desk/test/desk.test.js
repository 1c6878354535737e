// @ts-check
// createAgent + humanInTheLoopMiddleware through tollgate's gate, with no provider and no key: the
// refund and the closure wait together; the requester cannot approve the refund (four eyes); an
// approver lowers it and rejects the closure; the refund runs once, the closure never, the lookup
// (which the middleware does not ask about) runs after the decision; the email stays masked.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createTollgate, loadConfig, silentLogger } from "tollgate";
import { TollgateClient } from "tollgate/client";
import { ScriptedChatModel } from "tollgate/testing";
import { deskAgent, deskTools } from "../agent.js";

const model = new ScriptedChatModel({
  rules: [
    {
      when: /refund (AC-\d+) (\d+) and close it/i,
      reply: ({ match }) => ({
        toolCalls: [
          { name: "lookup_account", args: { account_id: match[1] } },
          { name: "issue_refund", args: { account_id: match[1], amount_cents: Number(match[2]) } },
          { name: "close_account", args: { account_id: match[1] } },
        ],
      }),
      // Like a careful model, it never repeats the customer's email (free text is not masked).
      then: ({ toolResults }) => toolResults.filter((m) => m.name !== "lookup_account").map((m) => m.text.split("\n").at(-1)).join(" | "),
    },
  ],
});

test("a createAgent agent's HITL interrupts are tollgate's gate", async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "hitl-desk-test-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    AUTH_TOKENS: JSON.stringify({ "tok-sam-000001": { sub: "sam", roles: ["user"] }, "tok-pat-000001": { sub: "pat", roles: ["approver"] } }),
  });
  /** @type {Array<any>} */
  const done = [];
  const tollgate = await createTollgate({ config, log: silentLogger, graphs: { desk: deskAgent({ model, tools: deskTools(done) }) } });
  t.after(async () => {
    await tollgate.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  /** @param {string} token */
  const as = (token) => new TollgateClient({ baseUrl: "http://localhost", token, fetch: async (url, init) => tollgate.app.request(url, init) });
  const sam = as("tok-sam-000001");
  const pat = as("tok-pat-000001");

  const asked = await sam.run("acct-1", "Refund AC-1 4000 and close it").collect();
  const gate = asked.at(-1);
  assert.ok(gate?.type === "interrupt", `the run stops at the gate, not at ${gate?.type}`);
  assert.deepEqual(gate.calls.map((c) => [c.name, c.policy, c.editable]), [["issue_refund", "approver", true], ["close_account", "owner", false]]);
  assert.equal(done.length, 0, "nothing ran before the decision");
  const [refund, close] = gate.calls;

  await assert.rejects(sam.resume("acct-1", gate.interrupt_id, { decisions: [{ call_id: refund.call_id, approved: true }] }).collect(), { code: "forbidden" }, "four eyes");
  const decided = await pat
    .resume("acct-1", gate.interrupt_id, { decisions: [
      { call_id: refund.call_id, approved: true, edited_args: { amount_cents: 2_500 } },
      { call_id: close.call_id, approved: false, reason: "keep it open" },
    ] })
    .collect();
  const end = decided.at(-1);
  assert.ok(end?.type === "done", `the run completes, not ${end?.type}`);
  assert.deepEqual(done, [{ refund: "AC-1", amount_cents: 2_500, key: `acct-1:${refund.call_id}` }]);
  const results = decided.flatMap((e) => (e.type === "tool_result" ? [[e.name, e.status]] : []));
  assert.deepEqual(results.sort(), [["close_account", "rejected"], ["issue_refund", "ok"], ["lookup_account", "ok"]]);
  assert.ok(!JSON.stringify([asked, decided, await sam.getThread("acct-1")]).includes("ada@example.com"), "the email is masked everywhere");
  const audit = await sam.audit("acct-1");
  assert.deepEqual(audit.entries.map((e) => [e.tool, e.decision]), [["issue_refund", "edited"], ["close_account", "rejected"]]);
});
