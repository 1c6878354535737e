// @ts-check
// The plan node's question, then the gate: confirmed, the agent asks for the migration, which
// waits for its own approval and runs once; declined, nothing runs; a cancel at the question ends it.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createTollgate, loadConfig, silentLogger } from "tollgate";
import { TollgateClient } from "tollgate/client";
import { ScriptedChatModel } from "tollgate/testing";
import { migrationTools, planGraph } from "../graph.js";

const model = new ScriptedChatModel({
  rules: [
    {
      when: /migrate (\w+) on (\w+)/i,
      reply: ({ match }) => ({ toolCalls: [{ name: "schedule_migration", args: { database: match[1], window: match[2] } }] }),
      then: ({ toolResults: [result] }) => (result.text.startsWith("Rejected") ? "Not scheduled." : "Scheduled."),
    },
  ],
});

test("a plan confirmed by its question, then a migration approved at the gate; declined or cancelled, nothing runs", async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-confirm-test-"));
  /** @type {Array<any>} */
  const done = [];
  const tollgate = await createTollgate({ config: loadConfig({ DATA_DIR: dataDir }), log: silentLogger, graphs: { migrations: planGraph({ model, tools: migrationTools(done) }) } });
  t.after(async () => {
    await tollgate.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tollgate.app.request(url, init) });

  const asked = (await client.run("m-1", "Migrate orders on Sunday").collect()).at(-1);
  assert.ok(asked?.type === "interrupt", `the plan waits for a person, not ${asked?.type}`);
  assert.deepEqual(asked.calls, []);
  assert.deepEqual(asked.questions.map((q) => q.value), [{ plan: "Plan: Migrate orders on Sunday. Then each change waits for approval.", options: ["yes", "no"] }]);
  const gate = (await client.resume("m-1", asked.interrupt_id, { decisions: [], answers: [{ question_id: asked.questions[0].question_id, value: "yes" }] }).collect()).at(-1);
  assert.ok(gate?.type === "interrupt", `the migration waits at the gate, not ${gate?.type}`);
  assert.deepEqual(gate.calls.map((c) => [c.name, c.args]), [["schedule_migration", { database: "orders", window: "Sunday" }]]);
  assert.equal(done.length, 0);
  const end = (await client.resume("m-1", gate.interrupt_id, { decisions: [{ call_id: gate.calls[0].call_id, approved: true }] }).collect()).at(-1);
  assert.ok(end?.type === "done" && end.message === "Scheduled.", `done, not ${JSON.stringify(end)}`);
  assert.deepEqual(done, [{ database: "orders", window: "Sunday", key: `m-1:${gate.calls[0].call_id}` }]);

  const declinedAsk = (await client.run("m-2", "Migrate users on Monday").collect()).at(-1);
  assert.ok(declinedAsk?.type === "interrupt");
  const declined = (await client.resume("m-2", declinedAsk.interrupt_id, { decisions: [], answers: [{ question_id: declinedAsk.questions[0].question_id, value: "no" }] }).collect()).at(-1);
  assert.ok(declined?.type === "done" && declined.message === "Plan dropped; nothing was done.");

  const cancelAsk = (await client.run("m-3", "Migrate logs on Friday").collect()).at(-1);
  assert.ok(cancelAsk?.type === "interrupt");
  assert.equal((await client.cancel("m-3")).cancelled, true);
  assert.equal((await client.getThread("m-3")).last_outcome, "cancelled");
  assert.equal(done.length, 1, "only the approved migration ran");
});
