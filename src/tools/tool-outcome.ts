import type { ToolStatus } from "../protocol/index.js";

/** One tool call as the engine runs it. */
export interface ToolCallRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** How one call ended, before it becomes a ToolMessage and a `tool_result`. */
export interface ToolOutcome {
  status: ToolStatus;
  output?: string;
  error?: string;
  /** The call ran with these top-level arguments changed by the person who approved it. */
  edited?: readonly string[];
}
