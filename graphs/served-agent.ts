import type { AgentFactory, ServedGraph } from "../src/graph/index.js";
import { servedGraph, TOOLS_NODE } from "../src/graph/index.js";
import type { ToolRegistry } from "../src/tools/index.js";
import { type AgentGraph, compileAgentGraph } from "./agent.js";
import { compileAgentVariant } from "./agent-variants.js";

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

/** The built-in agent on the server's model, tools and checkpointer: what `tollgate` serves by default. */
export const builtInAgent: AgentFactory = ({ checkpointer, registry, ...opts }) => servedAgent(compileAgentGraph(opts, checkpointer), registry);

/**
 * The built-in agent shaped as teams shape their graphs (see `compileAgentVariant`), served as a
 * team's graph is: for the suites that hold every guarantee for any graph.
 */
export const agentVariant =
  (variant: "kit" | "nested"): AgentFactory =>
  ({ checkpointer, registry, ...opts }) =>
    servedGraph({ id: AGENT_GRAPH_ID, graph: compileAgentVariant(variant, opts, checkpointer), registry });
