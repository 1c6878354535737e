/**
 * An MCP tool's output: its text is what the model is told and what `tool_result` shows (masked by
 * `sensitiveOutput` where it is JSON); structured content with no text is told as JSON, masked the
 * same way, and on a tool message's artifact it is masked too. An MCP error result (`isError`) is
 * a tool error, on the read path and through the gate.
 */
import type { ToolMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TollgateClient } from "../../../src/client/index.js";
import type { EventOf, ProtocolEvent } from "../../../src/protocol/index.js";
import { ScriptedChatModel } from "../../../src/testing/index.js";
import { defineTool } from "../../../src/tools/index.js";
import { inMemoryDesk, type InMemoryDesk } from "../../fixtures/mcp/in-memory-tools.js";
import { type InProcessOptions, inProcessTollgates } from "../../helpers/in-process-tollgate.js";

const open = inProcessTollgates();
const EMAIL = "ada@example.com";

/** What the model was told by each tool, in order. */
let told: ToolMessage[];

/** Calls the tool the message names (`call <tool> <json args>`); its answer never quotes the results. */
const model = () =>
  new ScriptedChatModel({
    rules: [
      {
        when: /^call (\w+) (.+)$/,
        reply: ({ match }) => ({ toolCalls: [{ name: match[1]!, args: JSON.parse(match[2]!) as Record<string, unknown> }] }),
        then: ({ toolResults }) => (told.push(...toolResults), "done"),
      },
    ],
  });

async function serve(options: InProcessOptions) {
  const tg = await open({ model: model(), ...options });
  return new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tg.app.request(url, init) });
}

const resultOf = (events: ProtocolEvent[]) => events.find((e): e is EventOf<"tool_result"> => e.type === "tool_result")!;

let desk: InMemoryDesk;
beforeEach(async () => {
  told = [];
  desk = await inMemoryDesk();
});
afterEach(async () => desk.close());

const masked = { sensitiveOutput: ["customer.email"] };

describe("sensitiveOutput on an MCP tool's output", () => {
  it("JSON text: the model reads it whole; tool_result and the thread show it masked", async () => {
    const client = await serve({ tools: () => [defineTool(desk.tools.lookup_order!, masked)] });
    const events = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    const result = resultOf(events);
    expect(result.status).toBe("ok");
    expect(JSON.parse(result.output!)).toEqual({ order_id: "A-1", status: "shipped", total_cents: 4_200, customer: { email: "***" } });
    expect(JSON.parse(told[0]!.text)).toMatchObject({ customer: { email: EMAIL } });
    expect(JSON.stringify([events, await client.getThread("t1")])).not.toContain(EMAIL);
  });

  it("structured content with no text: told as JSON, shown masked", async () => {
    const client = await serve({ tools: () => [defineTool(desk.tools.order_summary!, masked)] });
    const events = await client.run("t1", 'call order_summary {"order_id":"A-1"}').collect();
    expect(JSON.parse(resultOf(events).output!)).toMatchObject({ order_id: "A-1", customer: { email: "***" } });
    expect(JSON.parse(told[0]!.text)).toMatchObject({ customer: { email: EMAIL } });
    expect(JSON.stringify([events, await client.getThread("t1")])).not.toContain(EMAIL);
  });

  it("called by LangGraph's ToolNode: the message's text is the server's, its artifact's structured content masked", async () => {
    const lookup = defineTool(desk.tools.lookup_order!, masked);
    const bound = model().bindTools([lookup]);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (s) => ({ messages: [await bound.invoke(s.messages)] }))
      .addNode("tools", new ToolNode([lookup]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END), ["tools", END])
      .addEdge("tools", "agent");
    const client = await serve({ graphs: { g: graph } });
    const events = await client.run("t1", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(JSON.parse(resultOf(events).output!)).toMatchObject({ customer: { email: "***" } });
    expect(JSON.parse(told[0]!.text)).toMatchObject({ customer: { email: EMAIL } });
    expect(told[0]!.artifact).toEqual([{ type: "mcp_structured_content", data: { order_id: "A-1", status: "shipped", total_cents: 4_200, customer: { email: "***" } } }]);
    expect(JSON.stringify([events, await client.getThread("t1")])).not.toContain(EMAIL);
  });
});

describe("an MCP error result (isError)", () => {
  it("is a tool error on the read path", async () => {
    const client = await serve({ tools: () => [defineTool(desk.tools.lookup_order!)] });
    const result = resultOf(await client.run("t1", 'call lookup_order {"order_id":"Z-9"}').collect());
    expect(result).toMatchObject({ status: "error" });
    expect(result.error).toContain("No order Z-9");
    expect(told[0]!.text).toMatch(/^Error: .*No order Z-9/);
  });

  it("is a tool error through the gate, recorded as such", async () => {
    const client = await serve({ tools: () => [defineTool(desk.tools.void_order!)] });
    const asked = (await client.run("t1", 'call void_order {"order_id":"A-1"}').collect()).at(-1) as EventOf<"interrupt">;
    expect(asked.type).toBe("interrupt");
    const done = await client.resume("t1", asked.interrupt_id, { decisions: [{ call_id: asked.calls[0]!.call_id, approved: true }] }).collect();
    const result = resultOf(done);
    expect(result).toMatchObject({ status: "error" });
    expect(result.error).toContain("Order A-1 cannot be voided");
  });
});
