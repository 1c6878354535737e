export { createApp } from "./app.js";
export type { AppDeps } from "./app-deps.js";
export { SSE_HEADERS } from "./sse-response.js";
