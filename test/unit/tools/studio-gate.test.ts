/**
 * A team's `createAgent` with LangChain's HITL middleware, run as `langgraph dev` runs it (a plain
 * invoke with a checkpointer, no tollgate server): the approval the resume delivers opens the
 * tool's gate for exactly that call, once. In a process that serves tollgate, only a run's own gate
 * counts, so the same resume opens nothing.
 */
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedChatModel } from "../../../src/testing/index.js";
import { defineTool } from "../../../src/tools/index.js";
import { refuseStudioGates } from "../../../src/tools/studio-gate.js";

const refunded: string[] = [];
const refund = defineTool(
  tool(async ({ order_id }) => (refunded.push(order_id), `Refunded ${order_id}`), { name: "refund_order", description: "Refund an order.", schema: z.object({ order_id: z.string() }) }),
  { kind: "irreversible" },
);

const agent = () =>
  createAgent({
    model: new ScriptedChatModel({ rules: [{ when: /^refund (\S+)$/, reply: ({ match }) => ({ toolCalls: [{ name: "refund_order", args: { order_id: match[1]! } }] }), then: ({ toolResults }) => toolResults.map((m) => m.text).join(" / ") }] }),
    tools: [refund],
    middleware: [humanInTheLoopMiddleware({ interruptOn: { refund_order: true } })],
    checkpointer: new MemorySaver(),
  });

/** Asks for a refund, approves it the way Studio's resume does, and gives the tool's answer. */
async function approveRefund(order: string): Promise<string> {
  const graph = agent();
  const config = { configurable: { thread_id: `t-${order}` } };
  const asked = await graph.invoke({ messages: [{ role: "user", content: `refund ${order}` }] }, config);
  expect(asked.__interrupt__).toHaveLength(1);
  const done = await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
  return String(done.messages.find((m) => m.getType() === "tool")?.content);
}

describe("a tool's gate outside a tollgate server", () => {
  it("opens for the call the resume approved, and the tool runs once", async () => {
    expect(await approveRefund("A-1")).toBe("Refunded A-1");
    expect(refunded).toEqual(["A-1"]);
  });

  it("stays shut in a process that serves tollgate: a resume alone is no approval there", async () => {
    refuseStudioGates();
    expect(await approveRefund("A-2")).toBe("Rejected: no approval for this call");
    expect(refunded).toEqual(["A-1"]);
  });
});
