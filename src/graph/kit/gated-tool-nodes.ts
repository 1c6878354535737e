import { END } from "@langchain/langgraph";
import { type ExecutionLedger, MemoryLedger } from "../../ledger/index.js";
import { type TollgateTool, ToolRegistry } from "../../tools/index.js";
import { CALL_TOOL_NODE, type MessagesState, TOOLS_NODE } from "../graph-state.js";
import { unansweredCalls } from "../tool-messages.js";
import { withKitTools } from "../discover-tools.js";
import { createCallToolNode } from "./call-tool-node.js";
import { createToolsNode } from "./tools-node.js";

export interface GatedToolNodesOptions {
  /**
   * Where approved calls are claimed when no tollgate server runs the graph (`langgraph dev`, a
   * plain `graph.invoke`): by default in memory, once per process. Under the server, the run's
   * gate claims them in the server's ledger.
   */
  ledger?: ExecutionLedger;
}

/**
 * tollgate's gate for a team's own `StateGraph` (any state with a `messages` channel):
 * - `tools`: runs at once every call that needs no approval (read tools, and calls that cannot
 *   run: unknown tool, bad arguments); leaves irreversible ones for the gate;
 * - `call_tool`: the gate; pauses with `interrupt()` until people decide, then runs each approved
 *   call once and answers the others;
 * - `afterModel(next?)`: route from the node that calls the model: to `tools` when it asked for
 *   tools, else `next` (default END);
 * - `afterTools(next)`: route from `tools`: to `call_tool` when a call waits for approval, else `next`.
 *
 * ```ts
 * const gate = gatedToolNodes([lookupOrder, refundOrder]);
 * new StateGraph(MessagesAnnotation)
 *   .addNode("agent", callModel).addNode("tools", gate.tools).addNode("call_tool", gate.call_tool)
 *   .addEdge(START, "agent")
 *   .addConditionalEdges("agent", gate.afterModel(), ["tools", END])
 *   .addConditionalEdges("tools", gate.afterTools("agent"), ["call_tool", "agent"])
 *   .addEdge("call_tool", "agent");
 * ```
 */
export function gatedToolNodes(tools: readonly TollgateTool[], opts: GatedToolNodesOptions = {}) {
  const registry = new ToolRegistry(tools);
  const gated = (s: MessagesState) => unansweredCalls(s.messages).some((c) => registry.needsApproval(c.name));
  return {
    registry,
    tools: withKitTools(createToolsNode(registry), tools),
    call_tool: withKitTools(createCallToolNode(registry, opts.ledger ?? new MemoryLedger()), tools),
    afterModel:
      <N extends string = typeof END>(next: N = END as N) =>
      (s: MessagesState): typeof TOOLS_NODE | N =>
        unansweredCalls(s.messages).length ? TOOLS_NODE : next,
    afterTools:
      <N extends string>(next: N) =>
      (s: MessagesState): typeof CALL_TOOL_NODE | N =>
        gated(s) ? CALL_TOOL_NODE : next,
  };
}

export type GatedToolNodes = ReturnType<typeof gatedToolNodes>;
