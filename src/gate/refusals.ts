import { AppError } from "../protocol/index.js";

/**
 * Every refusal the gate gives, in one place: one message per code, whichever face asked. Faces
 * and the run engine throw these and never word their own.
 */

// The words the model is told are the tool's (it tells them); the gate decides when.
export { DEFAULT_REASON, NO_DECISION } from "../tools/index.js";

/** Ids from a request are echoed at most this long. */
export const clip = (s: string): string => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

export const refusals = {
  /** `expiresAt` when the interrupt is at hand (a face that names none reads only the thread). */
  expired: (expiresAt?: number) => new AppError("approval_expired", `Approval window closed${expiresAt === undefined ? "" : ` at ${new Date(expiresAt).toISOString()}`}`),
  threadBusy: () => new AppError("thread_busy", "A run is already in flight on this thread"),
  notWaiting: () => new AppError("not_waiting", "This thread has no open interrupt"),
  alreadyClosed: () => new AppError("not_waiting", "This interrupt was already decided"),
  // Never echo the open interrupt's id: the stale one's owner can read it from GET if allowed.
  staleInterrupt: () => new AppError("stale_interrupt", "interrupt_id is not this thread's open interrupt"),
  unknownCall: (callId: string) => new AppError("unknown_call", `Call ${clip(callId)} is not pending in this interrupt`),
  twoDecisions: (callId: string) => new AppError("invalid_request", `Two decisions name call ${clip(callId)}`),
  decisionsRequired: () => new AppError("invalid_request", "decisions is required: this interrupt holds calls to decide"),
  noCallNamed: () => new AppError("invalid_request", "Name at least one call: this interrupt is decided call by call"),
  answersTooEarly: () => new AppError("invalid_request", "Answers go with the decision that closes the interrupt's last open call"),
  questionNotAsked: (id: string) => new AppError("invalid_request", `Question ${clip(id)} is not asked in this interrupt`),
  questionUnanswered: (id: string) => new AppError("invalid_request", `Question ${clip(id)} needs an answer (answers: [{question_id, value}])`),
  onlyOwnerAnswers: () => new AppError("forbidden", "Only the thread's owner may answer the questions of this interrupt"),
  alreadyDecided: (callId: string, how: string) => new AppError("already_decided", `Call ${clip(callId)} was already ${how}`),
  alreadyApproved: (callId: string) => new AppError("already_decided", `You already approved call ${clip(callId)}`),
  /** The interrupt changed between the edit's check and the gate's transaction: take the request again. */
  editCheckedElsewhere: () => new AppError("thread_busy", "The interrupt changed while the edit was checked; try again"),
  racing: () => new AppError("thread_busy", "Other decisions on this interrupt keep landing at the same time; try again"),
  /** A Slack user or an address that no directory entry names: it maps to no principal, so it can decide nothing. */
  unknownChannelUser: () => new AppError("forbidden", "You are not in tollgate's directory of principals, so you can decide nothing here"),
  /**
   * An approval or edit that names no version, or another one, of a call edited since: it would
   * ride on what its approver never saw. `shown` is the call as it now stands (masked).
   */
  callChanged: ({ callId, version, named, shown }: { callId: string; version: number; named: number | undefined; shown: unknown }) =>
    new AppError(
      "call_changed",
      named === undefined
        ? `Call ${clip(callId)} was edited since it was asked (now version ${version}): look at it again, and name the version you approve`
        : `Call ${clip(callId)} is at version ${version}, not ${named}: look at it again`,
      { call: shown },
    ),
} as const;
