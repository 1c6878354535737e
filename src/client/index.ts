export { TollgateClient, type TollgateClientOptions } from "./tollgate-client.js";
export { TollgateError, type ClientErrorCode } from "./errors.js";
export { openEventStream, type EventStream, type EventStreamSource } from "./event-stream.js";
export { readSse, type SseMessage } from "./sse-reader.js";
export { parseEvent } from "./parse-event.js";
export { backoffDelay, DEFAULT_RECONNECT, type ReconnectOptions, type ReconnectPolicy } from "./backoff.js";
// The resource and option types (one list, in types.ts).
export type * from "./types.js";
