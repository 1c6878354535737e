export { ABORT_SIGNAL_KEY, defineTool, throwIfAborted, toolContext } from "./tollgate-tool.js";
export type { TollgateTool, ToolContext, ToolKind } from "./tollgate-tool.js";
export { ToolRegistry } from "./tool-registry.js";
export { MASK, maskArgs } from "./mask-args.js";
export { runToolCall, untilAborted, validateArgs } from "./run-tool-call.js";
export type { ToolCallRequest, ToolOutcome } from "./run-tool-call.js";
export { hashArgs } from "./args-hash.js";
export { createDemoTools, setupDemoTables } from "./demo/index.js";
