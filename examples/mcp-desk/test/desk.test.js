// @ts-check
// createAgent over a real MCP server's tools, through tollgate's gate, with no provider and no key:
// the lookup (readOnlyHint) runs unasked, its email masked; the refund (destructiveHint) waits,
// runs once when approved, and a rejected one never reaches the server.
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
    { when: /look up (A-\d+)/i, reply: ({ match }) => ({ toolCalls: [{ name: "lookup_order", args: { order_id: match[1] } }] }), then: "Found it." },
    {
      when: /refund (A-\d+) (\d+)/i,
      reply: ({ match }) => ({ toolCalls: [{ name: "refund_order", args: { order_id: match[1], amount_cents: Number(match[2]) } }] }),
      then: ({ toolResults }) => toolResults.map((m) => m.text).join(" | "),
    },
  ],
});

test("an MCP server's tools behind tollgate's gate", async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-desk-test-"));
  const refundsFile = path.join(dataDir, "refunds.jsonl");
  const refunds = () => (fs.existsSync(refundsFile) ? fs.readFileSync(refundsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
  const { client: mcp, tools } = await deskTools({ refundsFile });
  const tollgate = await createTollgate({ config: loadConfig({ DATA_DIR: dataDir }), log: silentLogger, graphs: { desk: deskAgent({ model, tools }) } });
  t.after(async () => {
    await tollgate.close();
    await mcp.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tollgate.app.request(url, init) });

  const looked = await client.run("o-1", "Look up A-1").collect();
  assert.equal(looked.at(-1)?.type, "done", "the read-only tool runs without asking anyone");
  const result = looked.find((e) => e.type === "tool_result");
  assert.ok(result?.type === "tool_result" && result.status === "ok" && result.output?.includes('"customer_email":"***"'), "its output is shown with the email masked");
  assert.ok(!JSON.stringify(looked).includes("ada@example.com"));

  const asked = (await client.run("o-2", "Refund A-1 1500").collect()).at(-1);
  assert.ok(asked?.type === "interrupt", `the refund waits at the gate, not ${asked?.type}`);
  assert.deepEqual(asked.calls.map((c) => [c.name, c.policy]), [["refund_order", "owner"]]);
  assert.deepEqual(refunds(), [], "nothing reached the server before the decision");
  const decision = { decisions: [{ call_id: asked.calls[0].call_id, approved: true }] };
  const done = (await client.resume("o-2", asked.interrupt_id, decision).collect()).at(-1);
  assert.ok(done?.type === "done" && done.message === "Refunded 1500 cents on A-1", `approved, it runs: ${JSON.stringify(done)}`);
  await assert.rejects(client.resume("o-2", asked.interrupt_id, decision).collect(), "the same approval again is refused");
  assert.deepEqual(refunds().map((r) => [r.order_id, r.amount_cents]), [["A-1", 1500]], "it ran exactly once");

  const again = (await client.run("o-3", "Refund A-1 900").collect()).at(-1);
  assert.ok(again?.type === "interrupt");
  const rejected = await client.resume("o-3", again.interrupt_id, { decisions: [{ call_id: again.calls[0].call_id, approved: false, reason: "already refunded" }] }).collect();
  const rejection = rejected.find((e) => e.type === "tool_result");
  assert.ok(rejection?.type === "tool_result" && rejection.status === "rejected");
  assert.equal(refunds().length, 1, "a rejected refund never reaches the server");
});
