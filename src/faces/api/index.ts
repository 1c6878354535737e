export { createApp } from "./app.js";
export type { AppDeps } from "../../http/index.js";
export { SSE_HEADERS } from "../../http/index.js";
