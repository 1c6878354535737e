import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { outcomeMessage, UNPARSABLE_KEY } from "../../../graphs/tool-messages.js";
import type { EventBody } from "../../../src/protocol/index.js";
import { adaptGraphStream, type GraphChunk } from "../../../src/runs/adapter.js";
import { defineTool, ToolRegistry } from "../../../src/tools/index.js";

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
      ["messages", [new AIMessage("x"), {}]],
      ["values", { messages: [] }],
    ]);
    expect(events).toEqual([]);
  });
});
