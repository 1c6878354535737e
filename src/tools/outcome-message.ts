import { ToolMessage } from "@langchain/core/messages";
import { outcomeText, type ToolOutcome, type ToolStatus } from "../protocol/index.js";

/** Where tollgate keeps a tool call's outcome on its ToolMessage; `artifact` is never sent to the model. */
export interface ToolArtifact {
  tollgate_status: ToolStatus;
  error?: string;
  /** Arguments a person changed before approving (names only). */
  edited?: readonly string[];
}

/** The ToolMessage that tells the model how a call ended. */
export function outcomeMessage(call: { id?: string; name: string }, outcome: ToolOutcome): ToolMessage {
  const artifact: ToolArtifact = {
    tollgate_status: outcome.status,
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.edited?.length ? { edited: outcome.edited } : {}),
  };
  return new ToolMessage({
    content: outcomeText(outcome),
    tool_call_id: call.id!,
    name: call.name,
    status: outcome.status === "ok" ? "success" : "error",
    artifact,
  });
}

/** The outcome recorded on a ToolMessage (messages from other sources count as ok). */
export function outcomeOf(m: ToolMessage): ToolOutcome {
  const a = m.artifact as Partial<ToolArtifact> | undefined;
  const status = a?.tollgate_status ?? (m.status === "error" ? "error" : "ok");
  const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  const edited = a?.edited?.length ? { edited: a.edited } : {};
  // The model's copy names the edits first; `output` is what the tool returned.
  const output = a?.edited?.length ? content.slice(content.indexOf("\n") + 1) : content;
  return status === "ok" ? { status, output, ...edited } : { status, error: a?.error ?? content, ...edited };
}

// The texts themselves are the protocol's catalogue.
export { closingOutcomes, DEFAULT_REASON, NO_DECISION } from "../protocol/index.js";
