import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import { CALL_TOOL_NODE, gatedToolNodes, TOOLS_NODE, unansweredCalls } from "../src/graph/index.js";
import type { TollgateTool } from "../src/tools/index.js";
import { type ExecutionLedger, MemoryLedger } from "../src/ledger/index.js";
import { createAgentNode } from "./nodes/agent-node.js";
import { DEFAULT_MODEL_TIMEOUTS, type ModelTimeouts } from "./nodes/model-deadline.js";
import { AgentState, type AgentStateType, type AgentUpdate } from "./state.js";

export const DEFAULT_SYSTEM_PROMPT =
  "You are an order-support agent. Use the tools to look up orders, refund them and email " +
  "customers. Refunds and emails are irreversible: a person approves each call before it runs. " +
  "If a call is rejected, do not retry it; tell the user what happened.";

export interface AgentGraphOptions {
  model: BaseChatModel;
  tools: readonly TollgateTool[];
  /**
   * Where the history repair reads what ran, and where approved calls are claimed when no server
   * runs the graph (Studio); the server passes its store's ledger.
   */
  ledger?: ExecutionLedger;
  /** Model calls per run, unless `configurable.max_rounds` says otherwise. */
  maxRounds?: number;
  systemPrompt?: string;
  /** How long a model call may go without output; default 60 s to the first, 30 s between. */
  modelTimeouts?: ModelTimeouts;
}

/**
 * agent → tools (read-only, at once) → call_tool (irreversible, behind the interrupt): the
 * kit's nodes (`gatedToolNodes`) around the agent's own model node. Returns the uncompiled graph;
 * `compileAgentGraph` adds the static interrupt before `call_tool`.
 */
export function createAgentWorkflow(opts: AgentGraphOptions) {
  const ledger = opts.ledger ?? new MemoryLedger();
  const kit = gatedToolNodes(opts.tools, { ledger });
  const { registry } = kit;
  const defaultMax = opts.maxRounds ?? 8;
  const maxRounds = (config: { configurable?: Record<string, unknown> } | undefined) => {
    const v = Number(config?.configurable?.max_rounds);
    return Number.isInteger(v) && v > 0 ? v : defaultMax;
  };
  const gated = (s: AgentStateType) => unansweredCalls(s.messages).some((c) => registry.needsApproval(c.name));

  return new StateGraph(AgentState)
    .addNode(
      "agent",
      createAgentNode({
        model: opts.model,
        registry,
        ledger,
        systemPrompt: opts.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        timeouts: opts.modelTimeouts ?? DEFAULT_MODEL_TIMEOUTS,
      }),
    )
    .addNode(TOOLS_NODE, kit.tools)
    // A resume starts a fresh budget of model calls.
    .addNode(CALL_TOOL_NODE, async (s: AgentStateType, config): Promise<AgentUpdate> => ({ ...(await kit.call_tool(s, config)), rounds: 0 }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", kit.afterModel(END), [TOOLS_NODE, END])
    .addConditionalEdges(
      TOOLS_NODE,
      // Approval comes before the round limit: calls left unanswered would break the history.
      (s, config) => (s.closed ? END : gated(s) ? "call_tool" : s.rounds >= maxRounds(config) ? END : "agent"),
      ["call_tool", "agent", END],
    )
    .addConditionalEdges(
      CALL_TOOL_NODE,
      (s, config) => (s.closed || s.rounds >= maxRounds(config) ? END : "agent"),
      ["agent", END],
    );
}

/**
 * The graph with its gate: it always stops before `call_tool` until someone resumes it. With
 * `dynamic`, no static interrupt: the kit's `call_tool` pauses itself, as in a team's graph.
 */
export function compileAgentGraph(opts: AgentGraphOptions, checkpointer?: BaseCheckpointSaver, gate: "static" | "dynamic" = "static") {
  return createAgentWorkflow(opts).compile({ checkpointer, interruptBefore: gate === "static" ? [CALL_TOOL_NODE] : [] });
}

export type AgentGraph = ReturnType<typeof compileAgentGraph>;
