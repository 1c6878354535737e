import type { InterruptPayload, ToolStatus } from "./events.js";

/** The JSON shapes of the API's resources, shared by server and client like the events are. */

/** One person's answer to one pending call of an interrupt. */
export interface Decision {
  call_id: string;
  approved: boolean;
  /** Shown to the model as `Rejected: <reason>`; the server defaults it to `User denied`. */
  reason?: string;
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
}

/** `GET /threads/:thread_id`. */
export interface ThreadView {
  thread_id: string;
  status: ThreadStatus;
  last_outcome: LastOutcome | null;
  messages: ThreadMessage[];
  /** The open interrupt, as its `interrupt` event carried it. */
  pending: InterruptPayload | null;
}
