import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";

/** Where @langchain/core keeps a runnable's config and the context variables in its async-local store. */
const CHILD_CONFIG = Symbol.for("lc:child_config");
const CONTEXT_VARIABLES = Symbol.for("lc:context_variables");
const TRACER = "langchain_tracer";

type RunWithConfig = <T>(config: unknown, callback: () => T, avoidCreatingRootRunTree?: boolean) => T;
type Store = Record<PropertyKey, unknown> | undefined;
let installed = false;

/**
 * With tracing off, @langchain/core still builds a langsmith `RunTree` (a uuid7 from
 * `getRandomValues`, a dotted order, a dozen environment reads) on every runnable invocation, only
 * to carry the config through AsyncLocalStorage to the code it calls: 12 per tollgate run, 18% of
 * what a run costs inside LangGraph (bench/results/history.md, "What was tried"; `npx tsx bench/graph-run.ts`).
 * This hands the same config over in a plain object instead. Upstream tried the same and did not
 * merge it (langchain-ai/langchainjs#10043), so it lives here.
 *
 * Process-wide and only for a process that never traces: call it when LangSmith tracing is off.
 * A call that brings its own LangChain tracer, or asks for no root run tree, takes the original
 * path. What differs: code that reads the store expecting a RunTree (`traceable` nested in a
 * runnable) sees none, which with tracing off it would only have used to do nothing; and
 * `setContextVariable` called inside a runnable keeps the config only in a RunTree, so a node that
 * sets one loses `getConfig()` for the rest of its body (tollgate's nodes set none).
 */
export function skipIdleRunTrees(): void {
  if (installed) return;
  installed = true;
  const provider = AsyncLocalStorageProviderSingleton as unknown as { runWithConfig: RunWithConfig; getInstance(): { getStore(): Store; run<T>(store: Store, cb: () => T): T } };
  const original = provider.runWithConfig.bind(provider);
  provider.runWithConfig = (config, callback, avoidCreatingRootRunTree) => {
    if (avoidCreatingRootRunTree || bringsTracer(config)) return original(config, callback, avoidCreatingRootRunTree);
    const storage = provider.getInstance();
    const carrier: Record<PropertyKey, unknown> = { extra: { [CHILD_CONFIG]: config } };
    const previous = storage.getStore()?.[CONTEXT_VARIABLES];
    if (previous !== undefined) carrier[CONTEXT_VARIABLES] = previous;
    return storage.run(carrier, callback);
  };
}

/** Whether the config's callbacks (a handler list or a manager) include a LangChain tracer. */
function bringsTracer(config: unknown): boolean {
  const callbacks = (config as { callbacks?: unknown } | undefined)?.callbacks;
  if (!callbacks) return false;
  const isTracer = (h: unknown) => (h as { name?: string } | undefined)?.name === TRACER;
  if (Array.isArray(callbacks)) return callbacks.some(isTracer);
  const manager = callbacks as { handlers?: unknown[]; inheritableHandlers?: unknown[] };
  return Boolean(manager.handlers?.some(isTracer) || manager.inheritableHandlers?.some(isTracer));
}
