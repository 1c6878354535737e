export * from "./events.js";
export * from "./errors.js";
export * from "./sse.js";
export * from "./resources.js";
export * from "./zod-issues.js";
export * from "./resource-schemas.js";
export * from "./webhook-schemas.js";
export * from "./langgraph-message.js";
