import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { compileAgentGraph } from "../../../graphs/agent.js";
import { outcomeOf } from "../../../src/graph/index.js";
import { createModel } from "../../../src/model/index.js";
import { defineTool } from "../../../src/tools/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.js";

// Where the graph is driven directly (LangGraph Studio, the SDK), nothing stops a new message
// while calls wait at the gate. The pending calls are then closed as rejected, never run, and the
// model gets a history it accepts. The fake model is strict: it answers an invalid one with a 400.

let model: FakeOpenAI;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

function setup() {
  const paid: string[] = [];
  const pay = defineTool(
    tool(async ({ cents }) => (paid.push(String(cents)), `paid ${cents}`), {
      name: "pay",
      description: "pay",
      schema: z.object({ cents: z.number() }),
    }),
    { kind: "irreversible" },
  );
  const chat = createModel({ model: "fake", openaiApiKey: "k", openaiBaseUrl: model.url });
  return { graph: compileAgentGraph({ model: chat, tools: [pay] }, new MemorySaver()), paid };
}

describe("a new message while calls wait at the gate", () => {
  it("closes them as rejected ('superseded by a new message') before the new message; nothing runs", async () => {
    const { graph, paid } = setup();
    const config = { configurable: { thread_id: "sup-1" } };
    model.push({ toolCalls: [{ id: "p1", name: "pay", args: { cents: 5 } }, { id: "p2", name: "pay", args: { cents: 6 } }] });
    await graph.invoke({ messages: [new HumanMessage("pay twice")] }, config);
    expect((await graph.getState(config)).next).toEqual(["call_tool"]);

    model.push({ text: "Fine, I won't pay." });
    await graph.invoke({ messages: [new HumanMessage("actually, don't")] }, config);
    const req = model.requests.at(-1)!;
    expect(req.invalid).toBeUndefined();

    const messages = (await graph.getState(config)).values.messages as BaseMessage[];
    const shape = messages.map((m) => (ToolMessage.isInstance(m) ? `tool ${m.tool_call_id}: ${m.text}` : `${m.getType()} ${m.text}`));
    expect(shape).toEqual([
      "human pay twice",
      "ai ",
      "tool p1: Rejected: superseded by a new message",
      "tool p2: Rejected: superseded by a new message",
      "human actually, don't",
      "ai Fine, I won't pay.",
    ]);
    expect(outcomeOf(messages[2] as ToolMessage).status).toBe("rejected");
    expect(paid).toEqual([]);
    expect((await graph.getState(config)).next).toEqual([]);
  });
});
