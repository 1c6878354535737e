import { refusals } from "../protocol/index.js";
import type { ServedGraph } from "./served-graph.js";

/** The graph served when a request names none and `agent` is among them. */
export const DEFAULT_GRAPH_ID = "agent";

/** The graphs a server serves, by id, and the rules for which one a thread gets. */
export class GraphCatalog {
  private readonly byId: ReadonlyMap<string, ServedGraph>;

  constructor(graphs: readonly ServedGraph[]) {
    if (graphs.length === 0) throw new Error("No graph to serve");
    const byId = new Map<string, ServedGraph>();
    for (const g of graphs) {
      if (byId.has(g.id)) throw new Error(`Two graphs have the id '${g.id}'`);
      byId.set(g.id, g);
    }
    this.byId = byId;
  }

  /** `GET /graphs`. */
  list(): Array<{ graph_id: string; description: string | null }> {
    return [...this.byId.values()].map((g) => ({ graph_id: g.id, description: g.description }));
  }

  all(): ServedGraph[] {
    return [...this.byId.values()];
  }

  /** The graph a new thread gets: the one named, else `agent` if served, else the only one. */
  pick(requested: string | undefined): ServedGraph {
    if (requested !== undefined) {
      const g = this.byId.get(requested);
      if (!g) throw refusals.unknownGraph(requested);
      return g;
    }
    const fallback = this.fallback();
    if (!fallback) throw refusals.nameAGraph();
    return fallback;
  }

  /** The graph a request that names none gets: `agent` if served, else the only one; undefined when that is ambiguous. */
  fallback(): ServedGraph | undefined {
    return this.byId.get(DEFAULT_GRAPH_ID) ?? (this.byId.size === 1 ? [...this.byId.values()][0] : undefined);
  }

  /** The graph of an existing thread; `requested`, when given, must be it. */
  forThread(graphId: string, requested?: string): ServedGraph {
    if (requested !== undefined) this.pick(requested); // an unknown id is a bad request first
    if (requested !== undefined && requested !== graphId) throw refusals.graphMismatch(graphId);
    const g = this.byId.get(graphId);
    if (!g) throw refusals.graphNotServed(graphId);
    return g;
  }
}
