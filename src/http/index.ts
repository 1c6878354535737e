/**
 * The HTTP kit every face shares (tollgate's own API, LangGraph's): what a face is given, body
 * validation, the caller's principal, the thread id in the path, SSE responses, the OpenAPI types
 * its routes declare. The one door into HTTP helpers: no face imports another face's files.
 */
export type { AppDeps } from "./app-deps.js";
export { MAX_BODY_BYTES } from "./body-limit.js";
export { BodyAborted, depthOver, MAX_JSON_DEPTH, parseBody } from "./parse-body.js";
export { authenticate, principalOf } from "./principal-context.js";
export { THREAD_ID, threadIdSchema, threadParam } from "./thread-param.js";
export { SSE_HEADERS, sseResponse, type SseOptions } from "./sse-response.js";
export type { Endpoint, JsonSchema, OpenApiExtension } from "./openapi-types.js";
export { waitingResponse } from "./waiting-response.js";
export { loggedPath } from "./logged-path.js";
