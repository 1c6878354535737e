import type { ReconnectOptions, ReconnectPolicy } from "./backoff.js";
import { reconnectPolicy } from "./backoff.js";
import { errorFromResponse, networkError, protocolError } from "./errors.js";
import { openEventStream, type EventStream } from "./event-stream.js";
import type { CreateThreadBody, Decision, RunOptions, StreamOptions, ThreadView } from "./types.js";

export interface TollgateClientOptions {
  /** Server origin (and path prefix, if any), e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  reconnect?: ReconnectOptions;
}

const SSE = "text/event-stream";

/** Typed client for the tollgate HTTP + SSE contract (API.md). Runs in Node 20 and browsers. */
export class TollgateClient {
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch;
  readonly #reconnect: ReconnectPolicy;

  constructor(opts: TollgateClientOptions) {
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, "");
    const fetchImpl = opts.fetch ?? globalThis.fetch;
    // Browsers throw "Illegal invocation" when their fetch is called off `window`.
    this.#fetch = (input, init) => fetchImpl.call(globalThis, input, init);
    this.#reconnect = reconnectPolicy(opts.reconnect);
  }

  /** `POST /threads`. Rejects with `thread_exists` if the id is taken. */
  createThread(body: CreateThreadBody = {}): Promise<{ thread_id: string; status: string }> {
    return this.#json("POST", "/threads", body);
  }

  /** `GET /threads/:id`: status, last outcome, history and the open interrupt. */
  getThread(threadId: string): Promise<ThreadView> {
    return this.#json("GET", threadPath(threadId));
  }

  /** `POST /threads/:id/runs`: sends a user message and streams the run's events. */
  run(threadId: string, message: string, opts: RunOptions = {}): EventStream {
    const body = { message, ...(opts.on_disconnect ? { on_disconnect: opts.on_disconnect } : {}) };
    return this.#eventStream(threadId, "runs", body);
  }

  /** `POST /threads/:id/resume` with `Accept: text/event-stream`: streams the continuation. */
  resume(threadId: string, interruptId: string, decisions: Decision[]): EventStream {
    return this.#eventStream(threadId, "resume", { interrupt_id: interruptId, decisions });
  }

  /** `POST /threads/:id/resume` without asking for a stream: `202 {run_id}`; watch it with `stream()`. */
  resumeDetached(threadId: string, interruptId: string, decisions: Decision[]): Promise<{ run_id: string }> {
    return this.#json("POST", `${threadPath(threadId)}/resume`, { interrupt_id: interruptId, decisions });
  }

  /** `POST /threads/:id/cancel`. Idempotent. */
  cancel(threadId: string): Promise<{ thread_id: string; cancelled: boolean; status: string }> {
    return this.#json("POST", `${threadPath(threadId)}/cancel`, {});
  }

  /** `GET /threads/:id/stream`: the latest run's events after `lastEventId`, then the live ones. */
  stream(threadId: string, opts: StreamOptions = {}): EventStream {
    return openEventStream({
      follow: this.#follow(threadId),
      lastEventId: opts.lastEventId,
      reconnect: this.#reconnect,
    });
  }

  /** `GET /healthz`. */
  health(): Promise<{ ok: true }> {
    return this.#json("GET", "/healthz");
  }

  /** A POST that starts a run; drops are recovered through `GET …/stream`, never by re-posting. */
  #eventStream(threadId: string, action: "runs" | "resume", body: unknown): EventStream {
    return openEventStream({
      start: (signal) =>
        this.#fetch(`${this.#baseUrl}${threadPath(threadId)}/${action}`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: SSE },
          body: JSON.stringify(body),
          signal,
        }),
      follow: this.#follow(threadId),
      reconnect: this.#reconnect,
    });
  }

  #follow(threadId: string) {
    return (lastEventId: string | undefined, signal: AbortSignal) =>
      this.#fetch(`${this.#baseUrl}${threadPath(threadId)}/stream`, {
        headers: { accept: SSE, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) },
        signal,
      });
  }

  async #json<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await this.#fetch(this.#baseUrl + path, {
        method,
        // An explicit JSON Accept keeps POST /resume detached (202) whatever the runtime's default.
        headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw networkError(`${method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    if (!response.ok) throw await errorFromResponse(response);
    try {
      return (await response.json()) as T;
    } catch (err) {
      throw protocolError(`${method} ${path}: response is not JSON`, err);
    }
  }
}

function threadPath(threadId: string): string {
  return `/threads/${encodeURIComponent(threadId)}`;
}
