import { TollgateTool } from "../tools/index.js";

/** Where the kit's nodes keep the tools they gate, so a server can find them in a compiled graph. */
export const KIT_TOOLS = Symbol.for("tollgate.kit_tools");

/** Marks a kit node with its tools. */
export function withKitTools<F extends object>(node: F, tools: readonly TollgateTool[]): F {
  return Object.assign(node, { [KIT_TOOLS]: tools });
}

/**
 * Every tollgate tool a compiled graph holds where LangGraph keeps its parts: the kit's nodes, a
 * `ToolNode`'s tools (createAgent's included), the nodes of subgraphs added as nodes. A subgraph
 * that a node's own code invokes cannot be seen: its tools are passed to `createTollgate({ tools })`.
 */
export function discoverTools(graph: unknown): TollgateTool[] {
  const found = new Map<string, TollgateTool>();
  const seen = new Set<unknown>();
  const visit = (v: unknown, depth: number): void => {
    if (!v || (typeof v !== "object" && typeof v !== "function") || seen.has(v) || depth > 12) return;
    seen.add(v);
    if (v instanceof TollgateTool) {
      found.set(v.name, v);
      return;
    }
    const o = v as Record<string | symbol, unknown>;
    const kit = o[KIT_TOOLS];
    if (Array.isArray(kit)) for (const t of kit) visit(t, depth + 1);
    // A compiled graph's nodes; a node's runnable; a function node; a ToolNode's tools; sequences.
    if (o.nodes && typeof o.nodes === "object") for (const n of Object.values(o.nodes as object)) visit(n, depth + 1);
    for (const key of ["bound", "func", "graph", "first", "last", "runnable"]) visit(o[key], depth + 1);
    for (const key of ["tools", "steps", "middle"]) if (Array.isArray(o[key])) for (const t of o[key] as unknown[]) visit(t, depth + 1);
  };
  visit(graph, 0);
  return [...found.values()];
}
