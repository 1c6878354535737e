import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { compileAgentGraph } from "../../../graphs/agent.js";
import { DemoChatModel } from "../../../src/model/index.js";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/logger.js";
import { createTollgate, type Tollgate } from "../../../src/index.js";
import { type FakeOpenAI, historyProblem, startFakeOpenAI } from "../../helpers/fake-openai.js";

// A thread an older version, a crash or a misbehaving model server left with a history that no
// Chat Completions server accepts. The next message must repair it, not fail on it for good.

let model: FakeOpenAI;
let tg: Tollgate | undefined;
beforeAll(async () => {
  model = await startFakeOpenAI(); // strict: an invalid history gets OpenAI's 400
});
afterAll(() => model.close());
afterEach(async () => {
  await tg?.close();
  tg = undefined;
});

async function open(): Promise<Tollgate> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-broken-"));
  tg = await createTollgate({
    config: loadConfig({ DATA_DIR: dataDir, MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url }),
    log: silentLogger,
  });
  return tg;
}

const run = async (t: Tollgate, thread: string, message: string) =>
  (
    await t.app.request(`/threads/${thread}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message }),
    })
  ).text();

describe("a thread with a broken history", () => {
  it("is repaired before the next model call: ledger results kept, orphans dropped, malformed calls answered", async () => {
    const t = await open();
    const thread = "broken-1";
    t.store.threads.ensure(thread, "anonymous");
    // The refund ran (the ledger says so) but its answer never reached the history.
    t.store.ledger.claim(`${thread}:c2`, { threadId: thread, callId: "c2", name: "refund_order", argsHash: "h" });
    t.store.ledger.settle(`${thread}:c2`, { status: "ok", output: '{"refunded":true}' });
    const writer = compileAgentGraph({ model: new DemoChatModel(), tools: [] }, t.store.checkpointer);
    await writer.updateState(
      { configurable: { thread_id: thread } },
      {
        messages: [
          new HumanMessage({ id: "h1", content: "refund A-1001 and look it up" }),
          new AIMessage({
            id: "a1",
            content: "",
            tool_calls: [
              { id: "c1", name: "", args: {}, type: "tool_call" },
              { id: "c2", name: "refund_order", args: { order_id: "A-1001", amount_cents: 5, reason: "r" }, type: "tool_call" },
              { id: "c3", name: "lookup_order", args: { order_id: "A-1001" }, type: "tool_call" },
            ],
          }),
          new ToolMessage({ id: "t3", tool_call_id: "c3", name: "lookup_order", content: "{}" }),
          new ToolMessage({ id: "t9", tool_call_id: "ghost", name: "lookup_order", content: "from nowhere" }),
          new HumanMessage({ id: "h2", content: "hello?" }),
        ],
        closed: true,
      },
      "call_tool",
    );

    model.push({ text: "All sorted." });
    const sse = await run(t, thread, "are you there?");
    expect(sse).toContain("event: done");
    const req = model.requests.at(-1)!;
    expect(req.invalid).toBeUndefined();
    expect(historyProblem(req.messages)).toBeNull();
    const tools = req.messages.filter((m: { role: string }) => m.role === "tool");
    expect(tools.map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content])).toEqual([
      ["c3", "{}"],
      ["c1", "Error: malformed tool call"],
      ["c2", '{"refunded":true}'],
    ]);
    // No event announces the repaired past again: only this run's answer.
    expect(sse).not.toContain("event: tool_call");
    expect(sse).not.toContain("event: tool_result");

    // The repair is stored: the thread reads valid, and the next call needs no repair.
    const view = (await (await t.app.request(`/threads/${thread}`)).json()) as { messages: Array<Record<string, unknown>> };
    expect(view.messages.map((m) => [m.role, m.tool_call_id ?? ""])).toEqual([
      ["user", ""],
      ["assistant", ""],
      ["tool", "c3"],
      ["tool", "c1"],
      ["tool", "c2"],
      ["user", ""],
      ["user", ""],
      ["assistant", ""],
    ]);
    expect(view.messages[1]!.tool_calls).toMatchObject([{ id: "c1", name: "invalid_tool_call" }, { id: "c2" }, { id: "c3" }]);
    model.push({ text: "Still here." });
    expect(await run(t, thread, "thanks")).toContain("event: done");
    expect(model.requests.at(-1)!.invalid).toBeUndefined();
  });
});
