import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import type { LangSmithSettings } from "../config.js";
import type { Logger } from "../logger.js";
import type { ToolRegistry } from "../tools/index.js";
import type { SecretScrubber } from "./secret-scrubber.js";
import { MaskingClient, quietFetch } from "./tracing-client.js";
import { TraceMasker } from "./tracing-masker.js";

/** What a run's graph config carries for tracing. */
export interface RunTraceConfig {
  callbacks?: BaseCallbackHandler[];
  metadata?: Record<string, unknown>;
}

/** LangSmith tracing as the run machinery sees it. */
export interface RunTracing {
  /** A run's tracer and its ids as metadata; nothing when tracing is off. */
  runConfig(threadId: string, runId: string): RunTraceConfig;
  /** Sends what is queued, for at most a couple of seconds; never rejects. */
  flush(): Promise<void>;
}

/** Tracing off: no tracer, no client, no socket. */
export const NO_TRACING: RunTracing = { runConfig: () => ({}), flush: async () => {} };

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
 * and outputs and scrubs secrets (`TraceMasker`), with `thread_id` and `run_id` in every run's
 * metadata. Each run brings its own tracer in its config, so LangChain does not add the one it
 * would build from the environment (it adds one only when a config has none named
 * `langchain_tracer`), and that unmasked default client is never made for a run.
 *
 * Uploads are LangChain's: in the background, batched, never awaited by a run; a LangSmith that
 * is down or refuses costs one warning line (`quietFetch`).
 */
export function createTracing(o: TracingOptions): RunTracing {
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
  return {
    runConfig(threadId, runId) {
      const metadata = { thread_id: threadId, run_id: runId };
      const tracer = new LangChainTracer({ client, projectName: settings.project, metadata });
      return { callbacks: [tracer], metadata };
    },
    async flush() {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_DEADLINE_MS)));
      const sent = (async () => {
        await awaitAllCallbacks(); // LangChain's background handlers: the last run updates reach the client
        await client.awaitPendingTraceBatches();
      })().catch(() => undefined);
      await Promise.race([sent, deadline]);
      clearTimeout(timer);
    },
  };
}
