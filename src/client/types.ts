export type {
  Answer,
  ApprovalItem,
  ApprovalList,
  AuditDecision,
  AuditEntry,
  AuditTrail,
  Decision,
  GraphInfo,
  GraphList,
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

import type { Answer, Decision } from "../protocol/index.js";

/**
 * A bearer token, or a function giving the one to use now (called once per request, reconnects
 * included). `undefined` or `""` means: send no `Authorization` header.
 */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface CreateThreadBody {
  thread_id?: string;
  metadata?: Record<string, unknown>;
  /** The graph the thread runs for life (`listGraphs()`); default `agent` if served, else the only one. */
  graph_id?: string;
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
  /** With a message: the graph a new thread runs; for an existing one, it must be the thread's (else `graph_mismatch`). */
  graph_id?: string;
  /** With a resume: one answer per question the interrupt holds (`questions`). */
  answers?: Answer[];
}

/** A resume: the decisions, and what else it may carry. */
export interface ResumeOptions extends Pick<RunOptions, "on_disconnect" | "answers"> {
  /** One per pending call; empty for an interrupt that holds questions alone. */
  decisions: Decision[];
}

export interface StreamOptions {
  /** Replay only the events after this `<run_id>:<seq>`. */
  lastEventId?: string;
}
