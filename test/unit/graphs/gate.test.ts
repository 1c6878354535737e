import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileAgentGraph } from "../../../graphs/agent.js";
import { readDecisions } from "../../../graphs/decisions.js";
import { defineTool, hashArgs } from "../../../src/tools/index.js";

/** Asks for one refund, then answers "ok" once it sees a tool result. */
class RefundAsker extends BaseChatModel {
  _llmType() {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1)!;
    const message = ToolMessage.isInstance(last)
      ? new AIMessage("ok")
      : new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "pay", args: { cents: 5 }, type: "tool_call" }] });
    return { generations: [{ text: "", message }] };
  }
}

function setup() {
  const paid: string[] = [];
  const pay = defineTool(
    tool(async ({ cents }, config) => (paid.push(String(config.configurable?.idempotency_key)), `paid ${cents}`), {
      name: "pay",
      description: "pay",
      schema: z.object({ cents: z.number() }),
    }),
    { kind: "irreversible" },
  );
  const graph = compileAgentGraph({ model: new RefundAsker({}), tools: [pay] }, new MemorySaver());
  return { graph, paid };
}

async function toGate(graph: ReturnType<typeof setup>["graph"], thread: string) {
  const config = { configurable: { thread_id: thread } };
  await graph.invoke({ messages: [new HumanMessage("pay")] }, config);
  expect((await graph.getState(config)).next).toEqual(["call_tool"]);
}

async function continueWith(graph: ReturnType<typeof setup>["graph"], thread: string, decisions: unknown) {
  await graph.invoke(null, { configurable: { thread_id: thread, decisions } });
  const messages = (await graph.getState({ configurable: { thread_id: thread } })).values.messages as BaseMessage[];
  return messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
}

describe("the call_tool gate", () => {
  it("runs an approved call once, with its idempotency key", async () => {
    const { graph, paid } = setup();
    await toGate(graph, "t1");
    const msg = await continueWith(graph, "t1", [{ call_id: "c1", approved: true, args_hash: hashArgs({ cents: 5 }) }]);
    expect(msg.content).toBe("paid 5");
    expect(paid).toEqual(["t1:c1"]);
  });

  it("runs nothing when the arguments differ from the ones approved", async () => {
    const { graph, paid } = setup();
    await toGate(graph, "t2");
    const msg = await continueWith(graph, "t2", [{ call_id: "c1", approved: true, args_hash: hashArgs({ cents: 500 }) }]);
    expect(msg.content).toBe("Error: arguments differ from the approved call; not executed");
    expect(paid).toEqual([]);
  });

  it("rejects without a decision, with a reason, and on anything but a literal true", async () => {
    for (const [decisions, content] of [
      [undefined, "Rejected: no decision"],
      [[{ call_id: "other", approved: true }], "Rejected: no decision"],
      [[{ call_id: "c1", approved: false }], "Rejected: User denied"],
      [[{ call_id: "c1", approved: false, reason: "too much" }], "Rejected: too much"],
      [[{ call_id: "c1", approved: "true" }], "Rejected: User denied"],
      ["not json", "Rejected: no decision"],
    ] as const) {
      const { graph, paid } = setup();
      await toGate(graph, "t3");
      expect((await continueWith(graph, "t3", decisions)).content).toBe(content);
      expect(paid).toEqual([]);
    }
  });
});

describe("readDecisions", () => {
  it("reads an array, an object keyed by call id, and either as JSON", () => {
    const want = new Map([["c1", { call_id: "c1", approved: true, reason: undefined, args_hash: undefined }]]);
    for (const d of [[{ call_id: "c1", approved: true }], { c1: { approved: true } }, '[{"call_id":"c1","approved":true}]', '{"c1":{"approved":true}}']) {
      expect(readDecisions({ configurable: { decisions: d } })).toEqual(want);
    }
  });
});
