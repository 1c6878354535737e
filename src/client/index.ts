export { TollgateClient, type TollgateClientOptions } from "./tollgate-client.js";
export { TollgateError, type ClientErrorCode } from "./errors.js";
export { openEventStream, type EventStream, type EventStreamSource } from "./event-stream.js";
export { readSse, type SseMessage } from "./sse-reader.js";
export { parseEvent } from "./parse-event.js";
export { backoffDelay, DEFAULT_RECONNECT, type ReconnectOptions, type ReconnectPolicy } from "./backoff.js";
export type {
  ApprovalItem,
  ApprovalList,
  AuditDecision,
  AuditEntry,
  AuditTrail,
  CreateThreadBody,
  Decision,
  LastOutcome,
  ListThreadsOptions,
  Me,
  PendingCall,
  RunOptions,
  StreamOptions,
  ThreadList,
  ThreadMessage,
  ThreadStatus,
  ThreadSummary,
  ThreadToolCall,
  ThreadView,
  TokenSource,
} from "./types.js";
