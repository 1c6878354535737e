import { END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { type AgentGraphOptions, compileAgentGraph } from "./agent.js";
import { AgentState } from "./state.js";

/**
 * The demo agent shaped as teams shape their graphs, for the suites that hold every guarantee
 * for any graph: `kit` — the kit's nodes with no static interrupt (`call_tool` pauses itself);
 * `nested` — that graph as a subgraph in a parent's `desk` node, so the gate sits one level down.
 * Served as a team's graph is (tokens from the messages stream, closes that clear pending tasks).
 */
export function compileAgentVariant(variant: "kit" | "nested", opts: AgentGraphOptions, checkpointer: BaseCheckpointSaver) {
  if (variant === "kit") return compileAgentGraph(opts, checkpointer, "dynamic");
  const desk = compileAgentGraph(opts, undefined, "dynamic");
  return new StateGraph(AgentState).addNode("desk", desk).addEdge(START, "desk").addEdge("desk", END).compile({ checkpointer });
}
