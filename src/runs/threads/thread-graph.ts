import type { ServedGraph } from "../../graph/index.js";
import type { RunContext } from "../run-context.js";

/** The graph a thread runs, by its stored id (a thread keeps its graph for life). */
export async function graphOfThread(ctx: Pick<RunContext, "graphs" | "store">, threadId: string): Promise<ServedGraph> {
  const t = await ctx.store.threads.get(threadId);
  return ctx.graphs.forThread(t?.graph_id ?? ctx.graphs.pick(undefined).id);
}
