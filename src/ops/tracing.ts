import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import type { LangSmithSettings } from "../config.js";
import type { Logger } from "../logger.js";
import type { ToolRegistry } from "../tools/index.js";
import type { SecretScrubber } from "./secret-scrubber.js";
import { DroppingClient, MaskingClient, quietFetch } from "./tracing-client.js";
import { TraceMasker } from "./tracing-masker.js";

/** A graph that can carry default config (LangGraph's compiled graphs). */
interface Configurable<G> {
  withConfig(config: { callbacks: BaseCallbackHandler[] }): G;
}

/** LangSmith tracing, as the wiring uses it. */
export interface Tracing {
  /**
   * The graph with the masking tracer in its own config, so that everything done through it is
   * traced by that tracer: runs, and the state writes of closers and settlers, which bring no
   * config of their own (LangChain would give those an unmasked tracer built from the environment).
   */
  traced<G extends Configurable<G>>(graph: G): G;
  /** Sends what is queued, for at most a couple of seconds; never rejects. */
  flush(): Promise<void>;
}

/** Tracing off: no tracer, no client, no socket. */
export const NO_TRACING: Tracing = { traced: (graph) => graph, flush: async () => {} };

/**
 * Nothing traced, whatever the environment says, for a graph that must not be traced unmasked: a
 * LangChain tracer whose client drops every run. Being a `langchain_tracer`, it keeps LangChain
 * from adding its own from the environment (with the default, unmasking client).
 */
export const SILENT_TRACING: Tracing = {
  traced: (graph) => graph.withConfig({ callbacks: [new LangChainTracer({ client: new DroppingClient() })] }),
  flush: async () => {},
};

/** LangSmith answers a trace upload within this, or the upload is dropped (runs never wait for it). */
const UPLOAD_TIMEOUT_MS = 10_000;
/** How long shutdown waits for queued traces: `main` gives the whole shutdown five seconds. */
const FLUSH_DEADLINE_MS = 2_000;

export interface TracingOptions {
  settings: LangSmithSettings;
  registry: ToolRegistry;
  scrubber: SecretScrubber;
  log: Logger;
}

/**
 * Traces each run to LangSmith through one client of ours that masks sensitive tool arguments
 * and outputs and scrubs secrets (`TraceMasker`). `thread_id` and `run_id` reach every traced
 * run's metadata without help: a run passes both in `configurable`, which LangGraph copies into
 * metadata (test/e2e/tracing.test.ts holds it to that). The graph carries our tracer in its own
 * config (`traced`), so LangChain does not add the one it would build from the environment (it
 * adds one only when a config has none named `langchain_tracer`), and its unmasked default
 * client is never used for the graph.
 *
 * Uploads are LangChain's: in the background, batched, never awaited by a run; a LangSmith that
 * is down or refuses costs one warning line (`quietFetch`).
 */
export function createTracing(o: TracingOptions): Tracing {
  const { settings } = o;
  const endpoint = settings.endpoint ?? "https://api.smith.langchain.com";
  const client = new MaskingClient(
    {
      apiUrl: settings.endpoint,
      apiKey: settings.apiKey,
      workspaceId: settings.workspaceId,
      timeout_ms: UPLOAD_TIMEOUT_MS,
      fetchImplementation: quietFetch(o.log, endpoint),
      // Never hold a run's end until LangSmith has its trace.
      blockOnRootRunFinalization: false,
    },
    new TraceMasker(o.registry, o.scrubber),
  );
  // One for the process: it keeps each traced run by id until it ends, so runs in parallel share it.
  const tracer = new LangChainTracer({ client, projectName: settings.project });
  return {
    traced: (graph) => graph.withConfig({ callbacks: [tracer] }),
    async flush() {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), FLUSH_DEADLINE_MS)));
      const sent = (async () => {
        await awaitAllCallbacks(); // LangChain's background handlers: the last run updates reach the client
        await client.awaitPendingTraceBatches();
      })().catch(() => undefined);
      if ((await Promise.race([sent, deadline])) === "late") o.log.warn("LangSmith did not take the last traces in time; they are dropped", { endpoint });
      clearTimeout(timer);
    },
  };
}
