export type { Decision, LastOutcome, ThreadMessage, ThreadStatus, ThreadToolCall, ThreadView } from "../protocol/index.js";

export interface CreateThreadBody {
  thread_id?: string;
  metadata?: Record<string, unknown>;
}

export interface RunOptions {
  /** What the server does when this client goes away mid-run. Default `cancel`. */
  on_disconnect?: "cancel" | "continue";
}

export interface StreamOptions {
  /** Replay only the events after this `<run_id>:<seq>`. */
  lastEventId?: string;
}
