import { ToolMessage } from "@langchain/core/messages";
import type { ToolStatus } from "../protocol/index.js";
import type { ToolOutcome } from "./tool-outcome.js";

/** Where tollgate keeps a tool call's outcome on its ToolMessage; `artifact` is never sent to the model. */
export interface ToolArtifact {
  tollgate_status: ToolStatus;
  error?: string;
  /** Arguments a person changed before approving (names only). */
  edited?: readonly string[];
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

/** The reason a rejection carries when the person gave none. */
export const DEFAULT_REASON = "User denied";

/** What a call of a closed interrupt is told when nobody decided it. */
export const NO_DECISION = "no decision";

/** Fixed sentences of the contract. */
export const closingOutcomes = {
  rejected: (reason: string): ToolOutcome => ({ status: "rejected", error: `Rejected: ${reason}` }),
  expired: (): ToolOutcome => ({ status: "expired", error: "Expired: approval window closed; not executed" }),
  cancelled: (): ToolOutcome => ({ status: "cancelled", error: "Cancelled: not executed" }),
  /** A call still pending when a new message came (Studio, the SDK): closed, never run. */
  superseded: (): ToolOutcome => ({ status: "rejected", error: "Rejected: superseded by a new message" }),
  outcomeUnknown: (): ToolOutcome => ({ status: "error", error: "outcome unknown" }),
  /** An irreversible tool called without a live approval for this very call. */
  noApproval: (): ToolOutcome => ({ status: "rejected", error: "Rejected: no approval for this call" }),
  /** A call the model sent without a valid name: never reaches a tool or the gate. */
  malformed: (): ToolOutcome => ({ status: "error", error: "malformed tool call" }),
};
