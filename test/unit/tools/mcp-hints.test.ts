/**
 * MCP hints set the default kind: a tool given no kind (by `defineTool` or `toolMeta`) is `read`
 * only for `readOnlyHint: true`, else `irreversible` with policy `owner`. A kind a team gives
 * wins. `createTollgate({ mcpHints: false })` ignores the hints: every such tool waits at the gate.
 */
import { DynamicStructuredTool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TollgateClient } from "../../../src/client/index.js";
import type { ProtocolEvent } from "../../../src/protocol/index.js";
import { ScriptedChatModel } from "../../../src/testing/index.js";
import { defineTool, type TollgateTool } from "../../../src/tools/index.js";
import { inMemoryDesk, type InMemoryDesk } from "../../fixtures/mcp/in-memory-tools.js";
import { type InProcessOptions, inProcessTollgates } from "../../helpers/in-process-tollgate.js";

const open = inProcessTollgates();

/** A model that calls the tool the message names (`call <tool> <json args>`) and then repeats its results. */
const model = () =>
  new ScriptedChatModel({
    rules: [{ when: /^call (\w+) (.+)$/, reply: ({ match }) => ({ toolCalls: [{ name: match[1]!, args: JSON.parse(match[2]!) as Record<string, unknown> }] }), then: ({ toolResults }) => toolResults.map((m) => m.text).join(" / ") }],
  });

async function serve(options: InProcessOptions) {
  const tg = await open({ model: model(), ...options });
  return new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tg.app.request(url, init) });
}

/** A graph with LangGraph's own ToolNode and no gate: what runs there runs unasked. */
function ungatedGraph(tools: unknown[]) {
  const bound = model().bindTools(tools as never);
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s) => ({ messages: [await bound.invoke(s.messages)] }))
    .addNode("tools", new ToolNode(tools as never))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END), ["tools", END])
    .addEdge("tools", "agent");
}

const last = (events: ProtocolEvent[]) => events.at(-1)!;

let desk: InMemoryDesk;
beforeEach(async () => {
  desk = await inMemoryDesk();
});
afterEach(async () => desk.close());

describe("the kind an MCP tool's hints give it", () => {
  it("readOnlyHint: true → read; destructive, no annotations → irreversible with policy owner", () => {
    const kinds = (["lookup_order", "refund_order", "void_order"] as const).map((n) => defineTool(desk.tools[n]!));
    expect(kinds.map((t) => [t.name, t.kind, t.policy, t.hinted])).toEqual([
      ["lookup_order", "read", "owner", true],
      ["refund_order", "irreversible", "owner", true],
      ["void_order", "irreversible", "owner", true],
    ]);
  });

  it("annotations present but empty, or a hint other than true, loosen nothing; a tool from no MCP server given no kind waits too", () => {
    const withAnnotations = (annotations: unknown) =>
      new DynamicStructuredTool({ name: "x", description: "x", schema: { type: "object" as const, properties: {} }, responseFormat: "content_and_artifact", metadata: { annotations }, func: async () => ["", []] });
    for (const a of [undefined, {}, { readOnlyHint: false }, { readOnlyHint: "true" }, { destructiveHint: false }]) {
      expect(defineTool(withAnnotations(a)).kind, JSON.stringify(a)).toBe("irreversible");
    }
    const plain = new DynamicStructuredTool({ name: "y", description: "y", schema: { type: "object" as const, properties: {} }, func: async () => "" });
    expect(defineTool(plain).kind).toBe("irreversible");
  });

  it("a kind the team gives wins over the hints, both ways", () => {
    expect(defineTool(desk.tools.lookup_order!, { kind: "irreversible" }).kind).toBe("irreversible");
    expect(defineTool(desk.tools.refund_order!, { kind: "read" })).toMatchObject({ kind: "read", hinted: false });
  });
});

describe("served", () => {
  it("the read-only tool runs unasked; the destructive one waits at the gate, policy owner", async () => {
    const tools: TollgateTool[] = [defineTool(desk.tools.lookup_order!), defineTool(desk.tools.refund_order!)];
    const client = await serve({ tools: () => tools });
    const read = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(read.find((e) => e.type === "tool_call")).toMatchObject({ name: "lookup_order", needs_approval: false });
    expect(last(read)).toMatchObject({ type: "done" });
    const asked = await client.run("t2", 'call refund_order {"order_id":"A-1","amount_cents":100}').collect();
    expect(last(asked)).toMatchObject({ type: "interrupt", calls: [{ name: "refund_order", policy: "owner" }] });
    expect(desk.events).toEqual([]);
  });

  it("toolMeta with no kind: the hints decide, in a graph whose ToolNode holds the plain MCP tools", async () => {
    const client = await serve({ graphs: { g: ungatedGraph([desk.tools.lookup_order, desk.tools.refund_order]) }, toolMeta: { lookup_order: {}, refund_order: {} } });
    const read = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(read.find((e) => e.type === "tool_result")).toMatchObject({ name: "lookup_order", status: "ok" });
    const refused = await client.run("t2", 'call refund_order {"order_id":"A-1","amount_cents":100}').collect();
    expect(refused.find((e) => e.type === "tool_result")).toMatchObject({ status: "rejected", error: "Rejected: no approval for this call" });
    expect(desk.events).toEqual([]);
  });

  it("toolMeta's kind wins: a read-only-hinted tool named irreversible refuses to run unasked", async () => {
    const client = await serve({ graphs: { g: ungatedGraph([desk.tools.lookup_order]) }, toolMeta: { lookup_order: { kind: "irreversible" } } });
    const events = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ status: "rejected", error: "Rejected: no approval for this call" });
  });
});

describe("mcpHints: false", () => {
  it("a tool's hint is ignored: the read-only-hinted tool waits at the gate like any other", async () => {
    const client = await serve({ mcpHints: false, tools: () => [defineTool(desk.tools.lookup_order!)] });
    const asked = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(asked.find((e) => e.type === "tool_call")).toMatchObject({ name: "lookup_order", needs_approval: true });
    expect(last(asked)).toMatchObject({ type: "interrupt", calls: [{ name: "lookup_order", policy: "owner" }] });
  });

  it("toolMeta with no kind: irreversible; toolMeta's own kind still wins", async () => {
    const graph = ungatedGraph([desk.tools.lookup_order, desk.tools.order_summary]);
    const client = await serve({ mcpHints: false, graphs: { g: graph }, toolMeta: { lookup_order: {}, order_summary: { kind: "read" } } });
    const refused = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(refused.find((e) => e.type === "tool_result")).toMatchObject({ status: "rejected", error: "Rejected: no approval for this call" });
    const read = await client.run("t2", 'call order_summary {"order_id":"A-1"}').collect();
    expect(read.find((e) => e.type === "tool_result")).toMatchObject({ name: "order_summary", status: "ok" });
  });

  it("a graph holding a tool made read-only by its hint alone is refused at start, so it never runs unasked", async () => {
    const graph = ungatedGraph([defineTool(desk.tools.lookup_order!)]);
    await expect(serve({ mcpHints: false, graphs: { g: graph } })).rejects.toThrow(/'lookup_order' is read-only only by its MCP hint/);
  });
});
