import type { ReconnectOptions, ReconnectPolicy } from "./backoff.js";
import { reconnectPolicy } from "./backoff.js";
import { errorFromResponse, networkError, protocolError } from "./errors.js";
import { openEventStream, type EventStream } from "./event-stream.js";
import type {
  ApprovalList,
  AuditTrail,
  CreateThreadBody,
  GraphList,
  ListThreadsOptions,
  Me,
  ResumeOptions,
  RunOptions,
  StreamOptions,
  ThreadList,
  ThreadView,
  TokenSource,
} from "./types.js";

export interface TollgateClientOptions {
  /** Server origin (and path prefix, if any), e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /**
   * Bearer token sent as `Authorization: Bearer <token>` on every request, streams and their
   * reconnects included. A function is called once per request (so a page can swap tokens without
   * a new client); when it gives `undefined` or `""`, that request goes without the header.
   */
  token?: TokenSource;
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
  readonly #token: TokenSource | undefined;

  constructor(opts: TollgateClientOptions) {
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, "");
    const fetchImpl = opts.fetch ?? globalThis.fetch;
    // Browsers throw "Illegal invocation" when their fetch is called off `window`.
    this.#fetch = (input, init) => fetchImpl.call(globalThis, input, init);
    this.#reconnect = reconnectPolicy(opts.reconnect);
    this.#token = opts.token;
  }

  /** `GET /me`: who the server takes the caller to be (`anonymous` without auth). */
  me(): Promise<Me> {
    return this.#json("GET", "/me");
  }

  /** `GET /threads`: the caller's threads, most recently active first, a page at a time. */
  listThreads(opts: ListThreadsOptions = {}): Promise<ThreadList> {
    const query = new URLSearchParams();
    if (opts.limit !== undefined) query.set("limit", String(opts.limit));
    if (opts.cursor !== undefined && opts.cursor !== null) query.set("cursor", opts.cursor);
    const search = query.toString();
    return this.#json("GET", search ? `/threads?${search}` : "/threads");
  }

  /** `POST /threads`. Rejects with `thread_exists` if the id is taken. */
  createThread(body: CreateThreadBody = {}): Promise<{ thread_id: string; graph_id: string; status: string }> {
    return this.#json("POST", "/threads", body);
  }

  /** `GET /graphs`: the graphs this server serves. */
  listGraphs(): Promise<GraphList> {
    return this.#json("GET", "/graphs");
  }

  /** `GET /threads/:id`: status, owner, last outcome, history and the open interrupt. */
  getThread(threadId: string): Promise<ThreadView> {
    return this.#json("GET", threadPath(threadId));
  }

  /** `GET /threads/:id/audit`: every decision taken on the thread's tool calls, oldest first. */
  audit(threadId: string): Promise<AuditTrail> {
    return this.#json("GET", `${threadPath(threadId)}/audit`);
  }

  /** `GET /approvals`: the open interrupts the caller may decide. */
  approvals(): Promise<ApprovalList> {
    return this.#json("GET", "/approvals");
  }

  /** `POST /threads/:id/runs`: sends a user message and streams the run's events. */
  run(threadId: string, message: string, opts: RunOptions = {}): EventStream {
    const body = { message, ...(opts.on_disconnect ? { on_disconnect: opts.on_disconnect } : {}), ...(opts.graph_id ? { graph_id: opts.graph_id } : {}) };
    return this.#eventStream(threadId, "runs", body);
  }

  /**
   * `POST /threads/:id/resume` with `Accept: text/event-stream`: streams the continuation.
   * Each decision is sent as given, `reason` and `edited_args` included. `on_disconnect` as for `run`.
   */
  resume(threadId: string, interruptId: string, opts: ResumeOptions): EventStream {
    const body = {
      interrupt_id: interruptId,
      decisions: opts.decisions,
      ...(opts.answers ? { answers: opts.answers } : {}),
      ...(opts.on_disconnect ? { on_disconnect: opts.on_disconnect } : {}),
    };
    return this.#eventStream(threadId, "resume", body);
  }

  /**
   * `POST /threads/:id/resume` without asking for a stream: `202 {run_id}`; watch it with `stream()`.
   * In an interrupt that needs a quorum, while calls still wait: `{status: "waiting_human", waiting_on, run_id: null}`.
   */
  resumeDetached(
    threadId: string,
    interruptId: string,
    opts: Pick<ResumeOptions, "decisions">,
  ): Promise<{ run_id: string } | { status: "waiting_human"; waiting_on: string[]; run_id: null }> {
    return this.#json("POST", `${threadPath(threadId)}/resume`, { interrupt_id: interruptId, decisions: opts.decisions });
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

  /**
   * A POST that starts a run; drops are recovered through `GET …/stream`, never by re-posting.
   * A token function that throws fails the connection attempt like a network failure would: the
   * POST is not sent and the stream ends with `network_error` (its `cause` is the thrown error).
   */
  #eventStream(threadId: string, action: "runs" | "resume", body: unknown): EventStream {
    return openEventStream({
      start: async (signal) =>
        this.#fetch(`${this.#baseUrl}${threadPath(threadId)}/${action}`, {
          method: "POST",
          headers: await this.#headers({ "content-type": "application/json", accept: SSE }),
          body: JSON.stringify(body),
          signal,
        }),
      follow: this.#follow(threadId),
      reconnect: this.#reconnect,
    });
  }

  /** `GET …/stream`, for a first connection and every reconnect: each asks for the token afresh. */
  #follow(threadId: string) {
    return async (lastEventId: string | undefined, signal: AbortSignal) =>
      this.#fetch(`${this.#baseUrl}${threadPath(threadId)}/stream`, {
        headers: await this.#headers({
          accept: SSE,
          ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
        }),
        signal,
      });
  }

  /** `headers` plus `Authorization` when there is a token for this request. */
  async #headers(headers: Record<string, string>): Promise<Record<string, string>> {
    const source = this.#token;
    const token = typeof source === "function" ? await source() : source;
    return token ? { ...headers, authorization: `Bearer ${token}` } : headers;
  }

  /** A JSON call. A token function's own error rejects the call unchanged; nothing is sent then. */
  async #json<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    // An explicit JSON Accept keeps POST /resume detached (202) whatever the runtime's default.
    const headers = await this.#headers({
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    });
    let response: Response;
    try {
      response = await this.#fetch(this.#baseUrl + path, {
        method,
        headers,
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
