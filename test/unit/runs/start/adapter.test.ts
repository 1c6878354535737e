import { randomUUID } from "node:crypto";
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileAgentGraph } from "../../../../graphs/agent.js";
import { outcomeMessage, UNPARSABLE_KEY } from "../../../../src/graph/index.js";
import type { EventBody } from "../../../../src/protocol/index.js";
import { adaptGraphStream, customWriter, type GraphChunk } from "../../../../src/runs/start/adapter.js";
import { defineTool, ToolRegistry } from "../../../../src/tools/index.js";

const registry = new ToolRegistry([
  defineTool(tool(async () => "ok", { name: "lookup", description: "d", schema: z.object({ id: z.string() }) }), {
    kind: "read",
  }),
  defineTool(
    tool(async () => "ok", {
      name: "pay",
      description: "d",
      schema: z.object({ to: z.string(), card: z.object({ number: z.string() }), cents: z.number().int().positive() }),
    }),
    { kind: "irreversible", sensitive: ["card.number"] },
  ),
]);

async function adapt(chunks: GraphChunk[]): Promise<EventBody[]> {
  async function* source() {
    yield* chunks;
  }
  const out: EventBody[] = [];
  for await (const e of adaptGraphStream(source(), registry)) out.push(e);
  return out;
}

// Chunks shaped as `graph.stream(…, { streamMode: ["updates", "custom"] })` yields them.
const batch = new AIMessage({
  content: "Checking.",
  tool_calls: [
    { id: "c1", name: "lookup", args: { id: "A-1" }, type: "tool_call" },
    { id: "c2", name: "pay", args: { to: "bob", card: { number: "4242" }, cents: 5 }, type: "tool_call" },
    { id: "c3", name: "pay", args: { to: "bob" }, type: "tool_call" },
    { id: "c4", name: "pay", args: {}, type: "tool_call" },
  ],
  additional_kwargs: { [UNPARSABLE_KEY]: { c4: "arguments are not valid JSON: {" } },
});

describe("adaptGraphStream", () => {
  it("maps custom token chunks to token events, in order, skipping empty text", async () => {
    const events = await adapt([
      ["custom", { token: "Hel" }],
      ["custom", { token: "" }],
      ["custom", { token: "lo" }],
    ]);
    expect(events).toEqual([
      { type: "token", text: "Hel" },
      { type: "token", text: "lo" },
    ]);
  });

  it("announces every call of an agent update with its real args (the run log masks them), flagging only gated calls", async () => {
    const events = await adapt([["updates", { agent: { messages: [batch], rounds: 1 } }]]);
    expect(events).toEqual([
      { type: "tool_call", call_id: "c1", name: "lookup", args: { id: "A-1" }, needs_approval: false },
      { type: "tool_call", call_id: "c2", name: "pay", args: { to: "bob", card: { number: "4242" }, cents: 5 }, needs_approval: true },
      // schema-invalid or unparsable irreversible calls fail at once instead of waiting for a person
      { type: "tool_call", call_id: "c3", name: "pay", args: { to: "bob" }, needs_approval: false },
      { type: "tool_call", call_id: "c4", name: "pay", args: {}, needs_approval: false },
    ]);
  });

  it("turns tool node updates into tool_result events with the recorded status", async () => {
    const ok = outcomeMessage({ id: "c1", name: "lookup" }, { status: "ok", output: "{\"x\":1}" });
    const invalid = outcomeMessage({ id: "c3", name: "pay" }, { status: "invalid_args", error: "card: Required" });
    const rejected = outcomeMessage({ id: "c2", name: "pay" }, { status: "rejected", error: "Rejected: too much" });
    const events = await adapt([
      ["updates", { tools: { messages: [ok, invalid] } }],
      ["updates", { call_tool: { messages: [rejected], rounds: 0 } }],
    ]);
    expect(events).toEqual([
      { type: "tool_result", call_id: "c1", name: "lookup", status: "ok", output: "{\"x\":1}" },
      { type: "tool_result", call_id: "c3", name: "pay", status: "invalid_args", error: "card: Required" },
      { type: "tool_result", call_id: "c2", name: "pay", status: "rejected", error: "Rejected: too much" },
    ]);
  });

  it("treats a plain ToolMessage from elsewhere by its own status", async () => {
    const plain = new ToolMessage({ content: "boom", tool_call_id: "x", name: "lookup", status: "error" });
    expect(await adapt([["updates", { tools: { messages: [plain] } }]])).toEqual([
      { type: "tool_result", call_id: "x", name: "lookup", status: "error", error: "boom" },
    ]);
  });

  it("ignores the interrupt marker, empty updates and other modes: terminal events are not its business", async () => {
    const events = await adapt([
      ["updates", { __interrupt__: [] }],
      ["updates", { tools: null }],
      ["updates", { agent: { rounds: 2 } }],
      ["messages", [new ToolMessage({ content: "out", tool_call_id: "t" }), {}]],
      ["values", { messages: [] }],
    ]);
    expect(events).toEqual([]);
  });

  it("reads tokens from the messages stream, once per message: chunks as they come, a whole message only if none came", async () => {
    const events = await adapt([
      ["messages", [new AIMessageChunk({ id: "m1", content: "Hel" }), { langgraph_checkpoint_ns: "agent:1" }]],
      ["messages", [new AIMessageChunk({ id: "m1", content: "lo" }), { langgraph_checkpoint_ns: "agent:1" }]],
      // The node's output, seen again whole (under an id of its own): its text was streamed already.
      ["messages", [new AIMessage({ id: "m9", content: "Hello" }), { langgraph_checkpoint_ns: "agent:1" }]],
      // A message no model streamed (another task built it): its text, once.
      ["messages", [new AIMessage({ id: "m2", content: "Done." }), { langgraph_checkpoint_ns: "summary:2" }]],
    ]);
    expect(events).toEqual([
      { type: "token", text: "Hel" },
      { type: "token", text: "lo" },
      { type: "token", text: "Done." },
    ]);
  });

  it("announces each call and result once, by the node that made it, though the subgraph's parent node carries them again", async () => {
    const ai = new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "lookup", args: {}, type: "tool_call" }] });
    const answer = new ToolMessage({ content: "ok", tool_call_id: "c1", name: "lookup" });
    const earlier = new AIMessage({ content: "", tool_calls: [{ id: "c0", name: "lookup", args: {}, type: "tool_call" }] });
    const events = await adapt([
      ["updates", { agent: { messages: [ai] } }, ["desk:1"]],
      ["updates", { tools: { messages: [answer] } }, ["desk:1"]],
      // The parent's update holds the subgraph's whole output, an earlier run's call included.
      ["updates", { desk: { messages: [earlier, ai, answer] } }, []],
    ]);
    expect(events.map((e) => [e.type, "call_id" in e ? e.call_id : ""])).toEqual([
      ["tool_call", "c1"],
      ["tool_result", "c1"],
    ]);
  });
});

describe("customWriter: the agent node's tokens, through the adapter", () => {
  it("turns each token chunk a node writes into a token event at once, and nothing else into any event", () => {
    const events: EventBody[] = [];
    const write = customWriter((e) => events.push(e));
    write({ token: "Hel" });
    expect(events).toEqual([{ type: "token", text: "Hel" }]); // synchronously: no queue between
    write({ token: "" });
    write({ progress: 0.5 });
    write(null);
    write({ token: "lo" });
    expect(events).toEqual([
      { type: "token", text: "Hel" },
      { type: "token", text: "lo" },
    ]);
  });

  // The agent node has one way out for text, the graph's stream writer. Given the adapter's writer
  // (what the run engine does) or left to LangGraph's `custom` stream (Studio, plain graph.stream),
  // the same token events come out, one per model chunk, in order.
  it("gets every token of a real graph run, the same as the custom stream mode carries them", async () => {
    const answer = "Refund sent.";
    const graph = compileAgentGraph({ model: new FakeListChatModel({ responses: [answer] }), tools: [] }, new MemorySaver());
    const input = () => ({ messages: [new HumanMessage({ id: randomUUID(), content: "hi" })], rounds: 0, closed: false });

    const written: EventBody[] = [];
    const viaWriter = await graph._streamIterator(input(), {
      configurable: { thread_id: randomUUID() },
      streamMode: ["updates", "values"],
      writer: customWriter((e) => written.push(e)),
    } as Parameters<typeof graph._streamIterator>[1]);
    const streamed: EventBody[] = [];
    for await (const e of adaptGraphStream(viaWriter as AsyncIterable<GraphChunk>, registry)) streamed.push(e);
    expect(streamed).toEqual([]); // no token on the graph stream: the writer took them all
    expect(written.map((e) => (e.type === "token" ? e.text : "?")).join("")).toBe(answer);
    expect(written).toHaveLength(answer.length); // FakeListChatModel streams one character a chunk

    const viaCustom = await graph.stream(input(), { configurable: { thread_id: randomUUID() }, streamMode: ["updates", "custom"] });
    const custom: EventBody[] = [];
    for await (const e of adaptGraphStream(viaCustom as AsyncIterable<GraphChunk>, registry)) custom.push(e);
    expect(custom).toEqual(written);
  });
});
