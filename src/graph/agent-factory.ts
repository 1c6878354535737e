import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { ExecutionLedger } from "../ledger/index.js";
import type { ToolRegistry, TollgateTool } from "../tools/index.js";
import type { ServedGraph } from "./served-graph.js";

/** What the server hands an agent built from a model and tools (the built-in one, or a team's). */
export interface AgentInputs {
  model: BaseChatModel;
  tools: readonly TollgateTool[];
  /** Where approved calls are claimed, and where the history repair reads what ran. */
  ledger: ExecutionLedger;
  /** Model calls per run. */
  maxRounds: number;
  systemPrompt?: string;
  /** How long a model call may go without output. */
  modelTimeouts: { firstTokenMs: number; idleMs: number };
  /** The server's checkpointer, which the graph is compiled with. */
  checkpointer: BaseCheckpointSaver;
  registry: ToolRegistry;
}

/**
 * Builds the graph served when no graphs are given (`createTollgate({ model, tools })`): the
 * engine knows an agent only through this, and whoever starts the server hands one in.
 */
export type AgentFactory = (inputs: AgentInputs) => ServedGraph;
