import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { ToolStatus } from "../src/protocol/index.js";
import type { ToolOutcome } from "../src/tools/index.js";

/** Where tollgate keeps a tool call's outcome on its ToolMessage; `artifact` is never sent to the model. */
export interface ToolArtifact {
  tollgate_status: ToolStatus;
  error?: string;
  /** Arguments a person changed before approving (names only). */
  edited?: readonly string[];
}

/** Calls whose arguments were not valid JSON; they are answered `invalid_args` without running. */
export const UNPARSABLE_KEY = "tollgate_unparsable_args";

export function lastAssistant(messages: BaseMessage[]): AIMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (AIMessage.isInstance(m)) return m;
    if (!ToolMessage.isInstance(m)) return undefined;
  }
  return undefined;
}

/** The last assistant message's calls that no ToolMessage has answered yet. */
export function unansweredCalls(messages: BaseMessage[]): ToolCall[] {
  const ai = lastAssistant(messages);
  if (!ai?.tool_calls?.length) return [];
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0 && messages[i] !== ai; i--) {
    const m = messages[i]!;
    if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
  }
  return ai.tool_calls.filter((c) => !answered.has(c.id!));
}

export function unparsableError(ai: AIMessage | undefined, callId: string): string | undefined {
  const map = ai?.additional_kwargs?.[UNPARSABLE_KEY] as Record<string, string> | undefined;
  return map?.[callId];
}

/** What the model reads; an edited call says first which arguments the person changed (not their values). */
function contentFor(o: ToolOutcome): string {
  const body = bodyFor(o);
  return o.edited?.length ? `Approved with edits: ${o.edited.join(", ")}\n${body}` : body;
}

function bodyFor(o: ToolOutcome): string {
  switch (o.status) {
    case "ok":
      return o.output ?? "";
    case "invalid_args":
      return `Invalid arguments: ${o.error ?? ""}`;
    case "error":
      return `Error: ${o.error ?? "unknown error"}`;
    default:
      // rejected / expired / cancelled carry their full sentence in `error`
      return o.error ?? o.status;
  }
}

/** The ToolMessage that tells the model how a call ended. */
export function outcomeMessage(call: { id?: string; name: string }, outcome: ToolOutcome): ToolMessage {
  const artifact: ToolArtifact = {
    tollgate_status: outcome.status,
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.edited?.length ? { edited: outcome.edited } : {}),
  };
  return new ToolMessage({
    content: contentFor(outcome),
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

/** Fixed sentences of the contract. */
export const closingOutcomes = {
  rejected: (reason: string): ToolOutcome => ({ status: "rejected", error: `Rejected: ${reason}` }),
  expired: (): ToolOutcome => ({ status: "expired", error: "Expired: approval window closed; not executed" }),
  cancelled: (): ToolOutcome => ({ status: "cancelled", error: "Cancelled: not executed" }),
  /** A call still pending when a new message came (Studio, the SDK): closed, never run. */
  superseded: (): ToolOutcome => ({ status: "rejected", error: "Rejected: superseded by a new message" }),
  outcomeUnknown: (): ToolOutcome => ({ status: "error", error: "outcome unknown" }),
};
