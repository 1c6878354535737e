export type {
  ApprovalItem,
  ApprovalList,
  AuditDecision,
  AuditEntry,
  AuditTrail,
  Decision,
  LastOutcome,
  Me,
  PendingCall,
  ThreadList,
  ThreadMessage,
  ThreadStatus,
  ThreadSummary,
  ThreadToolCall,
  ThreadView,
} from "../protocol/index.js";

/**
 * A bearer token, or a function giving the one to use now (called once per request, reconnects
 * included). `undefined` or `""` means: send no `Authorization` header.
 */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface CreateThreadBody {
  thread_id?: string;
  metadata?: Record<string, unknown>;
}

export interface ListThreadsOptions {
  /** Page size; the server's default and cap apply when absent. */
  limit?: number;
  /** A page's `next_cursor`, for the page after it; `null` (the last page's) is the same as absent. */
  cursor?: string | null;
}

export interface RunOptions {
  /** What the server does when this client goes away mid-run. Default `cancel`. */
  on_disconnect?: "cancel" | "continue";
}

export interface StreamOptions {
  /** Replay only the events after this `<run_id>:<seq>`. */
  lastEventId?: string;
}
