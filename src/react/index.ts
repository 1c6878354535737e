export { useTollgate, type UseTollgateOptions, type UseTollgateResult } from "./use-tollgate.js";
export { TollgateSession, type TollgateSessionOptions, type TollgateSnapshot, type SessionStatus, type SessionError } from "./tollgate-session.js";
export { buildTimeline, blockStart, appendEvent, type TimelineItem, type ToolCard, type AnswerState, type RunBlock, type TimelineInput, type BlockSearch } from "./timeline.js";
export { ServerClock } from "./server-clock.js";
export { policyInWords, waitingInWords } from "../protocol/index.js";
// The typed client and the protocol types, so an app needs one import for all of it.
export { TollgateClient, TollgateError } from "../client/index.js";
export type * from "../client/types.js";
export type { ProtocolEvent, EventOf, EventType, InterruptPayload, PendingCall, ToolStatus } from "../protocol/index.js";
