/**
 * The gate lives in the tool: an irreversible TollgateTool runs its code only for a tool call
 * the run's gate holds a live approval for (call id, tool name, argument hash), and only through
 * the ledger — whoever calls it: LangGraph's prebuilt ToolNode, a node calling `.invoke`, the kit.
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunGate } from "../../../src/graph/index.js";
import { MemoryLedger } from "../../../src/ledger/index.js";
import { defineTool, type GateDecision, hashArgs, TOOL_GATE_KEY } from "../../../src/tools/index.js";

function wire() {
  const sent: Array<{ to: string; cents: number }> = [];
  const wireMoney = defineTool(
    tool(
      async (args: { to: string; cents: number }) => {
        sent.push(args);
        return `sent ${args.cents} to ${args.to}`;
      },
      { name: "wire_money", description: "Send money", schema: z.object({ to: z.string(), cents: z.number().int() }) },
    ),
    { kind: "irreversible" },
  );
  const lookup = defineTool(tool(async () => "balance 5", { name: "balance", description: "Balance", schema: z.object({}) }), { kind: "read" });
  return { sent, wireMoney, lookup };
}

const call = (id: string, args: Record<string, unknown>, name = "wire_money") => ({ id, name, args, type: "tool_call" as const });
const approved = (id: string, args: Record<string, unknown>, extra: Partial<GateDecision> = {}): GateDecision => ({
  call_id: id,
  approved: true,
  name: "wire_money",
  args_hash: hashArgs(args),
  run_args_hash: hashArgs(args),
  ...extra,
});

function gate(decisions: GateDecision[], refusals: string[] = []) {
  return new RunGate({ threadId: "t1", ledger: new MemoryLedger(), decisions, onRefusal: (c) => refusals.push(`${c.name}:${c.id}`) });
}

const withGate = (g: RunGate | undefined) => ({ configurable: { thread_id: "t1", ...(g ? { [TOOL_GATE_KEY]: g } : {}) } });

/** The status tollgate records on a ToolMessage, and what the model reads. */
const outcome = (m: unknown) => {
  const msg = m as ToolMessage;
  return { status: (msg.artifact as { tollgate_status?: string } | undefined)?.tollgate_status, content: msg.content };
};

describe("an irreversible tool without a live approval", () => {
  const args = { to: "bob", cents: 500 };

  it("does not run when called with no gate at all, and says why", async () => {
    const { sent, wireMoney } = wire();
    expect(outcome(await wireMoney.invoke(call("c1", args), withGate(undefined)))).toEqual({
      status: "rejected",
      content: "Rejected: no approval for this call",
    });
    expect(sent).toEqual([]);
  });

  it("does not run when called with plain arguments (no tool call, so no call id to approve)", async () => {
    const { sent, wireMoney } = wire();
    const refusals: string[] = [];
    expect(await wireMoney.invoke(args, withGate(gate([approved("c1", args)], refusals)))).toBe("Rejected: no approval for this call");
    expect(sent).toEqual([]);
    expect(refusals).toEqual(["wire_money:"]);
  });

  it.each([
    ["another call id", call("c2", { to: "bob", cents: 500 }), [approved("c1", { to: "bob", cents: 500 })]],
    ["other arguments under the approved id", call("c1", { to: "mallory", cents: 500 }), [approved("c1", { to: "bob", cents: 500 })]],
    ["an approval for another tool under the same id", call("c1", { to: "bob", cents: 500 }), [approved("c1", { to: "bob", cents: 500 }, { name: "send_email" })]],
  ])("does not run for %s; the gate is told", async (_, toolCall, decisions) => {
    const { sent, wireMoney } = wire();
    const refusals: string[] = [];
    expect(outcome(await wireMoney.invoke(toolCall, withGate(gate(decisions, refusals)))).status).toBe("rejected");
    expect(sent).toEqual([]);
    expect(refusals).toEqual([`wire_money:${toolCall.id}`]);
  });

  it("does not run for a call the person rejected: the tool answers with their reason (not a refusal: nothing went round the gate)", async () => {
    const { sent, wireMoney } = wire();
    const refusals: string[] = [];
    const g = gate([approved("c1", args, { approved: false, reason: "not today" })], refusals);
    expect(outcome(await wireMoney.invoke(call("c1", args), withGate(g)))).toEqual({ status: "rejected", content: "Rejected: not today" });
    expect(sent).toEqual([]);
    expect(refusals).toEqual([]);
  });

  it("does not run once the run that held the approval has ended", async () => {
    const { sent, wireMoney } = wire();
    const g = gate([approved("c1", args)]);
    g.close();
    expect(outcome(await wireMoney.invoke(call("c1", args), withGate(g))).status).toBe("rejected");
    expect(sent).toEqual([]);
  });
});

describe("an irreversible tool with a live approval", () => {
  const args = { to: "bob", cents: 500 };

  it("runs that call, once: called again it answers what it did, without running", async () => {
    const { sent, wireMoney } = wire();
    const g = gate([approved("c1", args)]);
    const first = outcome(await wireMoney.invoke(call("c1", args), withGate(g)));
    const again = outcome(await wireMoney.invoke(call("c1", args), withGate(g)));
    expect(first).toEqual({ status: "ok", content: "sent 500 to bob" });
    expect(again).toEqual(first);
    expect(sent).toEqual([args]);
  });

  it("runs with edited arguments only when the approval names them, and says which changed", async () => {
    const { sent, wireMoney } = wire();
    const edited = { to: "bob", cents: 300 };
    const g = gate([approved("c1", args, { edited_args: { cents: 300 }, run_args_hash: hashArgs(edited), edited: ["cents"] })]);
    expect(outcome(await wireMoney.invoke(call("c1", args), withGate(g))).status).toBe("rejected"); // the unedited call
    expect(outcome(await wireMoney.invoke(call("c1", edited), withGate(g)))).toEqual({ status: "ok", content: "Approved with edits: cents\nsent 300 to bob" });
    expect(sent).toEqual([edited]);
  });
});

describe("a graph that forgot its gate", () => {
  it("LangGraph's own ToolNode calls the tool straight after the model: the tool refuses; the read tool runs", async () => {
    const { sent, wireMoney, lookup } = wire();
    const model = (s: typeof MessagesAnnotation.State) =>
      ToolMessage.isInstance(s.messages.at(-1))
        ? { messages: [new AIMessage("done")] }
        : { messages: [new AIMessage({ content: "", tool_calls: [call("c1", { to: "eve", cents: 9 }), call("c2", {}, "balance")] })] };
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", model)
      .addNode("tools", new ToolNode([wireMoney, lookup]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END), ["tools", END])
      .addEdge("tools", "agent")
      .compile();
    const refusals: string[] = [];
    // Under the server every run carries a gate; this one holds no approval.
    const out = await graph.invoke({ messages: [{ role: "user", content: "pay eve" }] }, withGate(gate([], refusals)));
    const answers = out.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m.content]);
    expect(answers).toEqual([
      ["c1", "Rejected: no approval for this call"],
      ["c2", "balance 5"],
    ]);
    expect(sent).toEqual([]);
    expect(refusals).toEqual(["wire_money:c1"]);
  });
});
