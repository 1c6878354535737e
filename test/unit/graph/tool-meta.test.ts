/**
 * `createTollgate({ toolMeta })`: plain LangChain tools in a team's graph get tollgate's metadata
 * by name, and an irreversible one holds the gate itself like a `defineTool` one: the ToolNode's
 * copy is swapped for the gated tool.
 */
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TollgateClient } from "../../../src/client/index.js";
import { ScriptedChatModel } from "../../../src/testing/index.js";
import { inProcessTollgates } from "../../helpers/in-process-tollgate.js";

const open = inProcessTollgates();

function plainTools() {
  const sent: Array<{ to: string; cents: number }> = [];
  const wire = tool(
    async (args: { to: string; cents: number }) => {
      sent.push(args);
      return `sent ${args.cents}`;
    },
    { name: "wire_money", description: "Send money", schema: z.object({ to: z.string(), cents: z.number().int() }) },
  );
  return { sent, wire };
}

const model = () =>
  new ScriptedChatModel({
    rules: [{ when: /wire (\d+) to (\w+)/, reply: ({ match }) => ({ toolCalls: [{ name: "wire_money", args: { to: match[2]!, cents: Number(match[1]) } }] }), then: ({ toolResults }) => toolResults.map((m) => m.text).join(" / ") }],
  });

const toolMeta = { wire_money: { kind: "irreversible" as const, sensitive: ["to"], policy: "owner" as const } };

describe("toolMeta for plain LangChain tools", () => {
  it("a ToolNode with no gate around a plain tool: the tool, named in toolMeta, refuses; its arguments are masked", async () => {
    const { sent, wire } = plainTools();
    const bound = model().bindTools([wire]);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (s) => ({ messages: [await bound.invoke(s.messages)] }))
      .addNode("tools", new ToolNode([wire]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END), ["tools", END])
      .addEdge("tools", "agent");
    const tg = await open({ graphs: { plain: graph }, toolMeta });
    const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tg.app.request(url, init) });
    const events = await client.run("t1", "wire 5 to eve").collect();
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({ args: { to: "***", cents: 5 }, needs_approval: true });
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ status: "rejected", error: "Rejected: no approval for this call" });
    expect(sent).toEqual([]);
  });

  it("createAgent with humanInTheLoopMiddleware over a plain tool: approved, it runs once through the gate", async () => {
    const { sent, wire } = plainTools();
    const agent = createAgent({ model: model(), tools: [wire], middleware: [humanInTheLoopMiddleware({ interruptOn: { wire_money: true } })] });
    const tg = await open({ graphs: { desk: agent }, toolMeta });
    const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tg.app.request(url, init) });
    const asked = (await client.run("t2", "wire 7 to ann").collect()).at(-1);
    expect(asked).toMatchObject({ type: "interrupt", calls: [{ name: "wire_money", args: { to: "***", cents: 7 } }] });
    if (asked?.type !== "interrupt") return;
    const done = await client.resume("t2", asked.interrupt_id, { decisions: [{ call_id: asked.calls[0]!.call_id, approved: true }] }).collect();
    expect(done.at(-1)).toMatchObject({ type: "done", message: "sent 7" });
    expect(sent).toEqual([{ to: "ann", cents: 7 }]);
  });
});
