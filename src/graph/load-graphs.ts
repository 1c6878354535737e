import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { checkGraphId, quote } from "./graph-id.js";
import { agentGraph, type CompiledGraphLike, describeFound, isCompiledGraph, isStateGraph } from "./graph-kinds.js";
import { firstLine, graphError } from "./load-error.js";

// The file half of loading (langgraph.json), so this module is the one place graphs come from.
export { describeImportFailure, loadGraphsFile, type GraphsFileEntry } from "./graphs-file.js";
export type { CompiledGraphLike } from "./graph-kinds.js";

/** One graph as tollgate serves it: compiled, on tollgate's checkpointer. */
export interface ServedGraphSpec {
  graphId: string;
  description: string | null;
  graph: CompiledGraphLike;
}

export interface ResolveGraphsOptions {
  /** Tollgate's checkpointer (SQLite or PostgreSQL): every served graph keeps its threads there. */
  checkpointer: BaseCheckpointSaver;
  /** One line per graph whose own checkpointer is replaced. */
  warn: (msg: string, fields?: Record<string, unknown>) => void;
  /** Descriptions given beside the graphs (langgraph.json's); else a compiled graph's own `description`. */
  descriptions?: Record<string, string | null>;
}

const EXPECTED = "expected a StateGraph, a compiled graph, what createAgent returns, or a function returning one";

/**
 * `createTollgate({ graphs })` values to served graphs, in the order given. A value may be a
 * StateGraph (compiled here with tollgate's checkpointer), a compiled graph, what LangChain's
 * `createAgent` returns (its `.graph` is served), a promise of one, or a function (sync or async,
 * called once now with a config `{ configurable: {} }`) returning one of those.
 *
 * Every graph ends up on `opts.checkpointer`, as langgraph-api attaches its own: one that brought
 * another has it replaced, with one warning naming the graph. Throws a one-line error on an id
 * outside `[A-Za-z0-9_-]{1,64}`, on a value that is not a graph, or when there are no graphs.
 */
export async function resolveGraphs(input: Record<string, unknown>, opts: ResolveGraphsOptions): Promise<ServedGraphSpec[]> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new Error(`graphs must be an object keyed by graph id, not ${describeFound(input)}`);
  }
  const entries = Object.entries(input);
  if (!entries.length) throw new Error("graphs is empty: name at least one graph, or leave it out to serve the built-in agent");
  const served: ServedGraphSpec[] = [];
  // One after another: a factory may open connections or read files, and the first failure is
  // the one reported.
  for (const [graphId, value] of entries) {
    checkGraphId(graphId);
    const graph = await compiledGraph(graphId, value, opts.checkpointer);
    attachCheckpointer(graphId, graph, opts);
    served.push({ graphId, description: opts.descriptions?.[graphId] ?? ownDescription(graph), graph });
  }
  return served;
}

/** The compiled graph `value` stands for; throws naming the graph and what was found. */
async function compiledGraph(graphId: string, value: unknown, checkpointer: BaseCheckpointSaver): Promise<CompiledGraphLike> {
  let found = await value; // a module may export a promise of its graph, as langgraph.json allows
  let fromFunction = false;
  if (typeof found === "function") {
    fromFunction = true;
    try {
      // langgraph-api calls a factory per run with the run's config; tollgate serves one graph
      // per id, so it calls it once, with an empty config, when the graphs are loaded.
      found = await (found as (config: { configurable: Record<string, unknown> }) => unknown)({ configurable: {} });
    } catch (err) {
      throw graphError(graphId, `its function threw: ${firstLine(err)}`);
    }
  }
  const graph = agentGraph(found) ?? found;
  if (isCompiledGraph(graph)) return graph;
  if (isStateGraph(graph)) {
    let compiled: unknown;
    try {
      compiled = graph.compile({ checkpointer });
    } catch (err) {
      throw graphError(graphId, `compiling its StateGraph failed: ${firstLine(err)}`);
    }
    if (isCompiledGraph(compiled)) return compiled;
    throw graphError(graphId, `its StateGraph compiled to ${describeFound(compiled)}, not a compiled graph`);
  }
  const what = fromFunction ? `its function returned ${describeFound(found)}` : `found ${describeFound(found)}`;
  throw graphError(graphId, `not a graph: ${what}; ${EXPECTED}`);
}

/**
 * Puts the graph on tollgate's checkpointer, as langgraph-api does (`compiled.checkpointer = …`):
 * runs, interrupts and recovery read the threads from tollgate's database, so a graph keeping
 * them elsewhere (a MemorySaver from a tutorial, its own database) would lose them on restart and
 * hide them from the gate.
 */
function attachCheckpointer(graphId: string, graph: CompiledGraphLike, opts: ResolveGraphsOptions): void {
  const own: unknown = graph.checkpointer;
  if (own !== undefined && own !== null && own !== opts.checkpointer) {
    const what = typeof own === "object" ? (Object.getPrototypeOf(own)?.constructor?.name ?? "a checkpointer") : `checkpointer: ${String(own)}`;
    opts.warn(`graph ${quote(graphId)} brought its own checkpointer (${what}); tollgate replaces it with its own`, {
      graph_id: graphId,
      replaced: what,
    });
  }
  graph.checkpointer = opts.checkpointer;
}

/** The description a graph was compiled with (`compile({ description })`, createAgent's), if any. */
function ownDescription(graph: CompiledGraphLike): string | null {
  const d: unknown = (graph as { description?: unknown }).description;
  return typeof d === "string" && d.trim() ? d : null;
}
