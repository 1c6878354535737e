export { defineTool, isTollgateTool, TollgateTool } from "./tollgate-tool.js";
export type { PreviewContext, ToolKind, ToolMeta } from "./tollgate-tool.js";
export { StalePreview, stalePreviewError } from "./stale-preview.js";
export { ABORT_SIGNAL_KEY, callKey, throwIfAborted, toolContext } from "./tool-context.js";
export type { ToolContext } from "./tool-context.js";
export { TOOL_GATE_KEY, toolGateOf } from "./tool-gate.js";
// The permit, its decisions and the argument hashes are the gate's: tools ask for them.
export type { GateDecision, GatedCall, GatePermit, ToolGate } from "../gate/index.js";
export { closingOutcomes, DEFAULT_REASON, NO_DECISION, outcomeMessage, outcomeOf } from "./outcome-message.js";
export type { ToolArtifact } from "./outcome-message.js";
export { MALFORMED_CALL_NAME, ToolRegistry } from "./tool-registry.js";
export { MASK, maskAll, maskArgs, maskOutput, maskPaths, maskValues, sensitiveValues } from "./mask-args.js";
export { innerConfig, runInner, untilAborted } from "./run-tool-call.js";
export { runToolCall, validateArgs } from "./registry-calls.js";
export type { ToolCallRequest, ToolOutcome } from "./tool-outcome.js";
export { canonicalJson, hashArgs, RESERVED_ARG_NAMES } from "../gate/index.js";
export { createDemoTools, createDemoToolsOn, setupDemoTables, sqliteDemoTables, type DemoTables } from "./demo/index.js";
export { applyEdit } from "./apply-edit.js";
export type { EditResult } from "./apply-edit.js";
