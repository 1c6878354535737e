import type { InterruptPayload, PendingCall, ToolStatus } from "./events.js";

/** The JSON shapes of the API's resources, shared by server and client like the events are. */

/** One person's answer to one pending call of an interrupt. */
export interface Decision {
  call_id: string;
  approved: boolean;
  /** Shown to the model as `Rejected: <reason>`; the server defaults it to `User denied`. */
  reason?: string;
  /**
   * Only with `approved: true`, only for an editable tool: top-level keys that replace the call's
   * arguments before it runs (a shallow merge; keys not given keep their value).
   */
  edited_args?: Record<string, unknown>;
  /**
   * The call's version the person was shown. Needed to approve or edit a call edited since its
   * interrupt opened (version above 1); a reject needs none.
   */
  version?: number;
}

/** An answer to a question a graph asked with its own `interrupt()`; the graph's node gets `value`. */
export interface Answer {
  question_id: string;
  value: unknown;
}

export type ThreadStatus = "idle" | "running" | "waiting_human";

/** How the latest run ended; a run that stops at an interrupt leaves it unchanged. */
export type LastOutcome = "completed" | "max_rounds" | "cancelled" | "error" | "expired";

/** A tool call an assistant message asked for. */
export interface ThreadToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ThreadMessage {
  role: "user" | "assistant" | "tool";
  content: string;
  tool_calls?: ThreadToolCall[];
  tool_call_id?: string;
  name?: string;
  /** On tool messages: how the call ended, as its `tool_result` said. */
  status?: ToolStatus;
  /** On tool messages: the call ran with arguments a person edited. */
  edited?: boolean;
}

/** `GET /threads/:thread_id`. */
export interface ThreadView {
  thread_id: string;
  /** The graph the thread runs, for life. */
  graph_id: string;
  status: ThreadStatus;
  last_outcome: LastOutcome | null;
  /** The owning principal's `sub` (`anonymous` without auth). */
  owner: string;
  messages: ThreadMessage[];
  /** The open interrupt, as its `interrupt` event carried it. */
  pending: InterruptPayload | null;
}

/** One row of `GET /threads`. */
export interface ThreadSummary {
  thread_id: string;
  /** The graph the thread runs, for life. */
  graph_id: string;
  status: ThreadStatus;
  last_outcome: LastOutcome | null;
  /** ISO 8601 UTC. */
  created_at: string;
  updated_at: string;
  /** The start of the first user message; null before any. */
  title: string | null;
}

/** `GET /threads`: most recently active first. */
export interface ThreadList {
  items: ThreadSummary[];
  /** Pass as `?cursor=` for the next page; null on the last one. */
  next_cursor: string | null;
}

/** One graph of `GET /graphs`. */
export interface GraphInfo {
  graph_id: string;
  description: string | null;
}

/** `GET /graphs`: the graphs this server serves. */
export interface GraphList {
  items: GraphInfo[];
}

/** `GET /me`. */
export interface Me {
  sub: string;
  roles: string[];
}

/** One open interrupt the caller may decide, in `GET /approvals`. */
export interface ApprovalItem {
  thread_id: string;
  interrupt_id: string;
  calls: PendingCall[];
  expires_at: string;
  /** The thread owner's `sub`. */
  requested_by: string;
  /** It has waited past its escalation time (`approval.escalated` was sent). */
  escalated: boolean;
}

export interface ApprovalList {
  items: ApprovalItem[];
}

export const AUDIT_DECISIONS = ["approved", "edited", "rejected", "no_decision", "expired", "cancelled", "superseded"] as const;
export type AuditDecision = (typeof AUDIT_DECISIONS)[number];

/** The faces a person's decision can come through: tollgate's API, LangGraph's, Slack, email. */
export const DECISION_VIAS = ["api", "langgraph", "slack", "email"] as const;
export type DecisionVia = (typeof DECISION_VIAS)[number];

/** One decision on one pending call, in `GET /threads/:id/audit`. Rows never change. */
export interface AuditEntry {
  /** ISO 8601 UTC. */
  at: string;
  interrupt_id: string;
  call_id: string;
  tool: string;
  /** Keyed hash (HMAC-SHA256) of the call's arguments as the model asked for them. */
  args_hash: string;
  decision: AuditDecision;
  /** The deciding principal's `sub`; null for the system (expiry). */
  by: string | null;
  reason: string | null;
  /** How a person's decision came; absent for the system's (expiry) and rows from before it was kept. */
  via?: DecisionVia;
  /** The channel's own id of who decided (the Slack user id), where there is one. */
  channel_user?: string;
  /** The call's version the decision was taken on (1 until someone edits it). */
  version?: number;
  /** For `edited`: keyed hash of the arguments the call ran with. */
  edited_args_hash?: string;
  /** Keyed hash of the call's preview as the person was shown it (tools with a `preview`). */
  preview_hash?: string;
  /** Whether and how the call then ran, from the execution ledger; absent when it never started. */
  executed?: { status: ToolStatus | "unknown"; at: string };
}

export interface AuditTrail {
  thread_id: string;
  entries: AuditEntry[];
}
