export { defineTool, toolContext, throwIfAborted } from "./tollgate-tool.js";
export type { TollgateTool, ToolKind, ToolContext } from "./tollgate-tool.js";
export { ToolRegistry } from "./tool-registry.js";
export { maskArgs, MASK } from "./mask-args.js";
export { runToolCall, validateArgs } from "./run-tool-call.js";
export type { ToolCallRequest, ToolOutcome } from "./run-tool-call.js";
export { createDemoTools, setupDemoTables } from "./demo/index.js";
export { hashArgs } from "./args-hash.js";
