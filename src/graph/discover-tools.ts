import type { StructuredToolInterface } from "@langchain/core/tools";
import { defineTool, isTollgateTool, type TollgateTool, type ToolMeta } from "../tools/index.js";
import { isMcpTool } from "../tools/mcp-hints.js";

export interface DiscoverOptions {
  /**
   * Metadata for plain LangChain tools, by name (`createTollgate({ toolMeta })`): each such tool
   * in a ToolNode's list is replaced by its TollgateTool, so the gate holds for it too.
   */
  toolMeta?: Readonly<Record<string, ToolMeta>>;
  /** Whether an MCP tool's hints may make it `read` (`createTollgate({ mcpHints })`); default true. */
  mcpHints?: boolean;
}

const isPlainTool = (t: unknown): t is { name: string } =>
  !!t && typeof t === "object" && !isTollgateTool(t) && typeof (t as { name?: unknown }).name === "string" && typeof (t as { invoke?: unknown }).invoke === "function";

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
export function discoverTools(graph: unknown, opts: DiscoverOptions = {}): TollgateTool[] {
  const found = new Map<string, TollgateTool>();
  const seen = new Set<unknown>();
  const wrapped = new Map<unknown, TollgateTool>();
  /**
   * A plain LangChain tool with metadata given for it, or loaded from an MCP server (its hints
   * decide its kind, so one nobody named still waits at the gate): the tool list gets the wrapping
   * TollgateTool instead.
   */
  const gated = (t: unknown): unknown => {
    const given = isPlainTool(t) ? (opts.toolMeta?.[t.name] ?? (isMcpTool(t) ? {} : undefined)) : undefined;
    if (!given) return t;
    const meta: ToolMeta = given.kind || opts.mcpHints !== false ? given : { ...given, kind: "irreversible" };
    let w = wrapped.get(t);
    if (!w) wrapped.set(t, (w = defineTool(t as StructuredToolInterface, meta)));
    return w;
  };
  const visit = (v: unknown, depth: number): void => {
    if (!v || (typeof v !== "object" && typeof v !== "function") || seen.has(v) || depth > 12) return;
    seen.add(v);
    // By its brand, not `instanceof`: a team's package may hold another copy of tollgate's class.
    if (isTollgateTool(v)) {
      found.set(v.name, v);
      return;
    }
    const o = v as Record<string | symbol, unknown>;
    const kit = o[KIT_TOOLS];
    if (Array.isArray(kit)) for (const t of kit) visit(t, depth + 1);
    // A compiled graph's nodes; a node's runnable; a function node; a ToolNode's tools; sequences.
    if (o.nodes && typeof o.nodes === "object") for (const n of Object.values(o.nodes as object)) visit(n, depth + 1);
    for (const key of ["bound", "func", "graph", "first", "last", "runnable"]) visit(o[key], depth + 1);
    // A ToolNode looks its tools up in this list at every call (LangGraph's and LangChain's both):
    // a plain tool swapped for its TollgateTool here holds the gate wherever the node calls it.
    if (Array.isArray(o.tools)) o.tools.forEach((t, i, list) => (list[i] = gated(t)));
    for (const key of ["tools", "steps", "middle"]) if (Array.isArray(o[key])) for (const t of o[key] as unknown[]) visit(t, depth + 1);
  };
  visit(graph, 0);
  return [...found.values()];
}
