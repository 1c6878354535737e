/**
 * A face's answer to a decision in one shape, so faces compare: a run, a partial decision, or a
 * refusal's code. A status or the calls still waiting are compared where both sides have them
 * (Slack has no status; a click's taken decision names no calls). `codes`: where a face's words
 * cannot tell some codes apart (the decide page's "no longer waiting"), the ones it may mean.
 */
import type { Prediction } from "./model.js";

export type Outcome =
  | { kind: "run" }
  | { kind: "waiting"; waitingOn?: string[] }
  | { kind: "refused"; status?: number; code: string; codes?: readonly string[] };

export const describeOutcome = (o: Outcome): string =>
  o.kind === "refused"
    ? `${o.status ? `${o.status} ` : ""}${o.codes ? o.codes.join("|") : o.code}`
    : o.kind === "waiting"
      ? `waiting_human${o.waitingOn ? ` on [${o.waitingOn.join(", ")}]` : ""}`
      : "a run";

/** The outcome a prediction says. */
export const outcomeOfPrediction = (p: Prediction): Outcome =>
  p.kind === "refused" ? { kind: "refused", status: p.status, code: p.code } : p.kind === "waiting" ? { kind: "waiting", waitingOn: p.waitingOn } : { kind: "run" };

/** Whether a face's answer `got` is the `want`ed one, as far as that face can say. */
export function matches(got: Outcome, want: Outcome): boolean {
  if (got.kind !== want.kind) return false;
  if (got.kind === "waiting" && want.kind === "waiting") return !got.waitingOn || !want.waitingOn || got.waitingOn.join() === want.waitingOn.join();
  if (got.kind === "refused" && want.kind === "refused") {
    const statusOk = got.status === undefined || want.status === undefined || got.status === want.status;
    return statusOk && (got.codes ?? [got.code]).includes(want.code);
  }
  return true;
}

/** Counts for the stats line: an outcome without its details. */
export const outcomeKey = (o: Outcome): string => (o.kind === "waiting" ? "waiting_human" : o.kind === "refused" ? (o.codes ? o.codes.join("|") : o.code) : "run");
