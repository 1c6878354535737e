import type { ServedGraph } from "../src/graph/index.js";
import { TOOLS_NODE } from "../src/graph/index.js";
import type { ToolRegistry } from "../src/tools/index.js";
import type { AgentGraph } from "./agent.js";

/** The built-in agent's id; a request that names no graph gets it when it is served. */
export const AGENT_GRAPH_ID = "agent";

/**
 * The built-in agent as the engine serves it: it writes its own tokens (`config.writer`, the
 * lean path), a message resets its per-run counters, and a close answers the open calls as its
 * `tools` node would, with `closed` set so its router ends the graph there.
 */
export function servedAgent(graph: AgentGraph, registry: ToolRegistry): ServedGraph {
  return {
    id: AGENT_GRAPH_ID,
    description: "tollgate's built-in agent: read tools at once, irreversible ones behind the gate",
    graph,
    registry,
    tokens: "writer",
    gate: "static",
    messageInput: (message) => ({ messages: [message], rounds: 0, closed: false }),
    closeWrite: (messages) => ({ values: { messages, closed: true }, asNode: TOOLS_NODE, clear: false }),
  };
}
