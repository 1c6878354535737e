
/** One tool call as the engine runs it. */
export interface ToolCallRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** How one call ended: the protocol's, beside the texts the model reads of it. */
export type { ToolOutcome } from "../protocol/index.js";
