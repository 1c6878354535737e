/**
 * Error codes of the wire contract, each with its HTTP status. Only the server's onError turns a
 * code into a status; storage and runs throw AppError with a code and never build responses.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  /** The `Host` header names a host this server does not answer for (DNS rebinding). */
  invalid_host: 400,
  /** A bound on what one connection may hold (a thread-centric WebSocket's subscriptions); a command error there, not a status. */
  limit_exceeded: 400,
  /** Missing, unknown, expired or badly signed bearer token (auth on). */
  unauthorized: 401,
  /** The caller may see the thread but not do this (start runs, decide these calls, cancel). */
  forbidden: 403,
  /** A cross-site request from an origin that is neither this server's nor in `CORS_ORIGINS`. */
  forbidden_origin: 403,
  /** LangGraph's API: state is written only by the graph (`POST …/state`). */
  state_locked: 403,
  thread_not_found: 404,
  not_found: 404,
  thread_exists: 409,
  thread_busy: 409,
  awaiting_approval: 409,
  not_waiting: 409,
  stale_interrupt: 409,
  /** A decision on a call already closed, or on a quorum call this principal already approved. */
  already_decided: 409,
  /** An approval or edit of a call edited since (its version is above the one named, or none was): the body carries the call as it now stands. */
  call_changed: 409,
  /** The thread was started on another graph (a thread keeps its graph for life), or that graph is not served here. */
  graph_mismatch: 409,
  approval_expired: 410,
  /** A POST body that is not `application/json`. */
  unsupported_media_type: 415,
  unknown_call: 422,
  /** LangGraph's API: a feature this server does not offer (queued runs, runs from an old checkpoint, deleting threads). */
  unsupported: 422,
  /** Too many runs and resumes from one principal (`RATE_LIMIT_RUNS_PER_MINUTE`); see `Retry-After`. */
  rate_limited: 429,
  model_error: 502,
  /** After SIGTERM, until the process exits: requests on kept-alive connections still arrive. */
  shutting_down: 503,
  /** `MAX_CONCURRENT_RUNS` are in flight in this process; see `Retry-After`. */
  overloaded: 503,
  /** The database is locked, full or failing; nothing was applied and a retry is safe. */
  storage_unavailable: 503,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_STATUS, code);
}

/** A failure with a code from the contract; `message` is safe to show to clients. */
export class AppError extends Error {
  /** For 429 and 503: when a retry may succeed, sent as `Retry-After`. */
  readonly retryAfterSeconds?: number;
  /** For `call_changed`: the call as it now stands (masked, as `interrupt.calls[]` shows it). */
  readonly call?: unknown;

  constructor(
    readonly code: ErrorCode,
    message: string,
    o: { retryAfterSeconds?: number; call?: unknown } = {},
  ) {
    super(message);
    this.name = "AppError";
    this.retryAfterSeconds = o.retryAfterSeconds;
    this.call = o.call;
  }
}

/** The JSON body of every non-stream error response. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; call?: unknown };
}

/**
 * The one `thread_not_found`: a thread the caller may not see must answer byte for byte like one
 * that does not exist, so every place that refuses a thread builds its error here.
 */
export function threadNotFound(threadId: string): AppError {
  return new AppError("thread_not_found", `Thread ${threadId} not found`);
}
