import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import { ToolRegistry, type TollgateTool } from "../src/tools/index.js";
import { type ExecutionLedger, MemoryLedger } from "../src/ledger/index.js";
import { createAgentNode } from "./nodes/agent-node.js";
import { createCallToolNode } from "./nodes/call-tool-node.js";
import { DEFAULT_MODEL_TIMEOUTS, type ModelTimeouts } from "./nodes/model-deadline.js";
import { createToolsNode } from "./nodes/tools-node.js";
import { AgentState, type AgentStateType } from "./state.js";
import { unansweredCalls } from "./tool-messages.js";

export const DEFAULT_SYSTEM_PROMPT =
  "You are an order-support agent. Use the tools to look up orders, refund them and email " +
  "customers. Refunds and emails are irreversible: a person approves each call before it runs. " +
  "If a call is rejected, do not retry it; tell the user what happened.";

export interface AgentGraphOptions {
  model: BaseChatModel;
  tools: readonly TollgateTool[];
  /** Where approved calls are claimed before they run; the server passes its SQLite ledger. */
  ledger?: ExecutionLedger;
  /** Model calls per run, unless `configurable.max_rounds` says otherwise. */
  maxRounds?: number;
  systemPrompt?: string;
  /** How long a model call may go without output; default 60 s to the first, 30 s between. */
  modelTimeouts?: ModelTimeouts;
}

/**
 * agent → tools (read-only, at once) → call_tool (irreversible, behind the interrupt).
 * Returns the uncompiled graph; `compileAgentGraph` adds the gate.
 */
export function createAgentWorkflow(opts: AgentGraphOptions) {
  const registry = new ToolRegistry(opts.tools);
  const ledger = opts.ledger ?? new MemoryLedger();
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
    .addNode("tools", createToolsNode(registry))
    .addNode("call_tool", createCallToolNode(registry, ledger))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => (unansweredCalls(s.messages).length ? "tools" : END), ["tools", END])
    .addConditionalEdges(
      "tools",
      // Approval comes before the round limit: calls left unanswered would break the history.
      (s, config) => (s.closed ? END : gated(s) ? "call_tool" : s.rounds >= maxRounds(config) ? END : "agent"),
      ["call_tool", "agent", END],
    )
    .addConditionalEdges(
      "call_tool",
      (s, config) => (s.closed || s.rounds >= maxRounds(config) ? END : "agent"),
      ["agent", END],
    );
}

/** The graph with its gate: it always stops before `call_tool` until someone resumes it. */
export function compileAgentGraph(opts: AgentGraphOptions, checkpointer?: BaseCheckpointSaver) {
  return createAgentWorkflow(opts).compile({ checkpointer, interruptBefore: ["call_tool"] });
}

export type AgentGraph = ReturnType<typeof compileAgentGraph>;
