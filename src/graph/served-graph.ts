import type { BaseMessage } from "@langchain/core/messages";
import type { CompiledStateGraph } from "@langchain/langgraph";
import type { ToolRegistry } from "../tools/index.js";

/** What the engine calls on a compiled LangGraph graph; any `StateGraph(…).compile()` has it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CompiledGraph = Pick<CompiledStateGraph<any, any, any, any, any, any, any, any>, "getState" | "getStateHistory" | "updateState" | "_streamIterator">;

/** How a message's answers are written when the engine closes open calls (cancel, expiry, restart). */
export interface CloseWrite {
  values: Record<string, unknown>;
  asNode: string | undefined;
  /** Whether pending tasks are cleared afterwards, so nothing runs on from the close. */
  clear: boolean;
}

/**
 * One graph as the engine serves it. The engine knows graphs only through this and the helpers of
 * `src/graph`: a `messages` channel, where the gate pauses, how a user's message enters.
 */
export interface ServedGraph {
  readonly id: string;
  readonly description: string | null;
  readonly graph: CompiledGraph;
  /** The tools its gate knows (kinds, masks, policies): the graph's own plus the server's. */
  readonly registry: ToolRegistry;
  /** The state update a user's message starts a run with. */
  messageInput(message: BaseMessage): Record<string, unknown>;
  /**
   * Where tokens come from: `writer` — the graph writes `{ token }` chunks to `config.writer`
   * itself (the built-in agent's lean path); `messages` — LangGraph's messages stream, from any
   * chat model call in any node or subgraph.
   */
  readonly tokens: "writer" | "messages";
  /**
   * Where its gate pauses: `static` — before a top-level `call_tool` (`interruptBefore`), so the
   * calls are the last AI message's in the state the run ended with; `dynamic` — wherever an
   * `interrupt()` runs, read from the checkpoint (subgraphs included).
   */
  readonly gate: "static" | "dynamic";
  /** How answers to open calls are written. `pendingNode`: the node the graph was paused in, if any. */
  closeWrite(messages: BaseMessage[], pendingNode: string | undefined): CloseWrite;
}

/** A graph served as LangGraph runs it: messages in, tokens from the messages stream, closes clear pending tasks. */
export function servedGraph(o: { id: string; description?: string | null; graph: CompiledGraph; registry: ToolRegistry }): ServedGraph {
  return {
    id: o.id,
    description: o.description ?? null,
    graph: o.graph,
    registry: o.registry,
    tokens: "messages",
    gate: "dynamic",
    messageInput: (message) => ({ messages: [message] }),
    closeWrite: (messages, pendingNode) => ({ values: { messages }, asNode: pendingNode, clear: true }),
  };
}
