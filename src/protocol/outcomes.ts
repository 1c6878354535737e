import type { ToolStatus } from "./events.js";

/*
 * Every text the model reads about how a tool call ended, in one place: the contract's fixed
 * sentences (`Rejected: <reason>`, `Expired: …`), the calls a run never reached, and how a
 * result is worded for the model. Tools, the graph kit, the ledger and the run engine word none of
 * their own.
 */

/** How one call ended, before it becomes a ToolMessage and a `tool_result`. */
export interface ToolOutcome {
  status: ToolStatus;
  output?: string;
  error?: string;
  /** The call ran with these top-level arguments changed by the person who approved it. */
  edited?: readonly string[];
}

/** The reason a rejection carries when the person gave none. */
export const DEFAULT_REASON = "User denied";

/** What a call of a closed interrupt is told when nobody decided it. */
export const NO_DECISION = "no decision";

/** How the model's copy of an edited call's result starts: the line naming the edited arguments. */
export const EDITED_PREFIX = "Approved with edits:";

const notExecuted = (why: string): ToolOutcome => ({ status: "error", error: `not executed: ${why}` });

/** Fixed sentences of the contract, and the ends of calls that never ran. */
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
  /** A call of a tool this server does not serve. */
  toolNotFound: (name: string): ToolOutcome => ({ status: "error", error: toolNotFoundText(name) }),
  /** Calls a resume's run never reached, when its claim's commit may have gone in unseen. */
  claimLost: (): ToolOutcome => notExecuted("the run could not start"),
  /** Calls a run left open when it failed. */
  runFailed: (): ToolOutcome => notExecuted("the run failed"),
  /** Calls of a run the server restarted under. */
  restarted: (): ToolOutcome => notExecuted("the server restarted"),
  /** A run that lost its thread to another holder: it runs nothing more. */
  notHolder: (): ToolOutcome => notExecuted("this run no longer holds its thread"),
  /** A call id the ledger holds for other arguments. */
  reusedCallId: (): ToolOutcome => ({ status: "error", error: "call id already used for other arguments; not executed" }),
  /** The call's arguments are not the ones its approval was given on. */
  argsDiffer: (): ToolOutcome => ({ status: "error", error: "arguments differ from the approved call; not executed" }),
  /** An approved edit that does not apply to the call as it stands. */
  editRefused: (why: string): ToolOutcome => ({ status: "error", error: `${why}; not executed` }),
} as const;

/** The validation message of a call of a tool this server does not serve. */
export const toolNotFoundText = (name: string): string => `Tool '${name}' not found`;

/** Why a tool refused its call as stale, when it says no more. */
export const STALE_PREVIEW = "the preview the approval was given on no longer holds";

/** The error text of a call its tool refused as stale: a code the model and clients can read. */
export const stalePreviewText = (message: string): string => `stale_preview: ${message}`;

/** What the model reads of an outcome; an edited call says first which arguments the person changed (not their values). */
export function outcomeText(o: ToolOutcome): string {
  const body = bodyFor(o);
  return o.edited?.length ? `${EDITED_PREFIX} ${o.edited.join(", ")}\n${body}` : body;
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
