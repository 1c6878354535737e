import { Client, type ClientConfig } from "langsmith";
import type { Logger } from "../logger.js";
import type { TraceMasker, TracedRun } from "./tracing-masker.js";

type CreateRun = Client["createRun"];
type UpdateRun = Client["updateRun"];

/**
 * LangSmith's client with every run masked (`TraceMasker`) before the client sees it: the
 * client's own `hideInputs`/`hideOutputs` get inputs and outputs without the run's name or type,
 * and a tool run's inputs are its arguments, which only the tool's name can mask. Runs reach the
 * client only through `createRun` and `updateRun` (LangChain's tracer posts and patches run
 * trees), so every batch, multipart or compressed upload is built from masked runs.
 */
export class MaskingClient extends Client {
  constructor(
    config: ClientConfig,
    private readonly masker: TraceMasker,
  ) {
    super(config);
  }

  override createRun(...[run, options]: Parameters<CreateRun>): ReturnType<CreateRun> {
    return super.createRun(this.masked(run), options);
  }

  override updateRun(...[runId, run, options]: Parameters<UpdateRun>): ReturnType<UpdateRun> {
    return super.updateRun(runId, this.masked(run), options);
  }

  /** Masked; a run the masker cannot handle leaves without its data rather than with it. */
  private masked<T extends object>(run: T): T {
    try {
      return this.masker.run(run as TracedRun) as T;
    } catch {
      const stripped = { ...run } as Record<string, unknown>;
      for (const k of ["inputs", "outputs", "error", "events", "serialized"]) if (k in stripped) stripped[k] = k === "error" ? "(not traced)" : {};
      return stripped as T;
    }
  }
}

/** A LangSmith client that sends nothing: every run is dropped before it could be queued. */
export class DroppingClient extends Client {
  constructor() {
    super({
      apiKey: "unused",
      apiUrl: "http://127.0.0.1:9",
      autoBatchTracing: false,
      // Nothing reaches fetch; were something to, it would be answered here, not sent.
      fetchImplementation: (async () => new Response("{}")) as typeof fetch,
      // Given, so the constructor reads neither from the environment: a bad
      // LANGSMITH_TRACING_MODE or _SAMPLING_RATE there would make it throw.
      tracingMode: "langsmith",
      tracingSamplingRate: 1,
    });
  }

  override async createRun(): Promise<void> {}

  override async updateRun(): Promise<void> {}
}

/**
 * A `fetch` for the LangSmith client that never lets LangSmith trouble reach the logs as more
 * than one line: a refused connection, a timeout or an error status is logged once (until the
 * endpoint answers again) and answered with an empty success, so the client neither retries nor
 * prints its own warnings and stack traces. Those traces are dropped; runs never wait for them.
 */
export function quietFetch(log: Logger, endpoint: string, inner: typeof fetch = fetch): typeof fetch {
  let failing = false;
  const dropped = () => new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
  const failed = (detail: Record<string, unknown>) => {
    if (!failing) log.warn("LangSmith did not accept traces; dropping them until it does", { endpoint, ...detail });
    failing = true;
    return dropped();
  };
  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    let res: Response;
    try {
      res = await inner(input, init);
    } catch (err) {
      const cause = (err as { cause?: { code?: unknown } }).cause;
      return failed({ message: err instanceof Error ? err.message : String(err), ...(cause?.code ? { code: cause.code } : {}) });
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return failed({ status: res.status });
    }
    if (failing) log.info("LangSmith accepts traces again", { endpoint });
    failing = false;
    return res;
  }) as typeof fetch;
}
