// The engine's one front door to any graph: the state it needs, where a graph waits, closing open
// calls, the run's gate, the kit (`tollgate/graph`).
export { CALL_TOOL_NODE, type MessagesState, TOOLS_NODE } from "./graph-state.js";
export { type CloseWrite, type CompiledGraph, servedGraph, type ServedGraph } from "./served-graph.js";
export { gateStateOf, type GateState, type GraphQuestion, type HitlInterrupt, readGateState } from "./open-gate.js";
export { closePendingCalls } from "./close-open-calls.js";
export { answerFromLedger } from "./answer-from-ledger.js";
export { readDecisions } from "../gate/index.js";
export { ledgerKey, RunGate, type RunGateOptions } from "./run-gate.js";
export { encodeRunInput, holdsInput, inputMessage, type RunInput, runInputOf } from "./run-input.js";
export { closingOutcomes, lastAssistant, outcomeMessage, outcomeOf, type ToolArtifact, UNPARSABLE_KEY, unansweredCalls, unparsableError } from "./tool-messages.js";
export { type TokenChunk } from "./token-chunk.js";
export { type ApprovalRequest, createCallToolNode, isApprovalRequest } from "./kit/call-tool-node.js";
export { createToolsNode } from "./kit/tools-node.js";
export { gatedToolNodes, type GatedToolNodes, type GatedToolNodesOptions } from "./kit/gated-tool-nodes.js";
export { DEFAULT_GRAPH_ID, GraphCatalog } from "./graph-catalog.js";
export { discoverTools, KIT_TOOLS, withKitTools } from "./discover-tools.js";
export { checkGraphId, GRAPH_ID_PATTERN } from "./graph-id.js";
export { type CompiledGraphLike, isCompiledGraph, isStateGraph } from "./graph-kinds.js";
export { describeImportFailure, type GraphsFileEntry, loadGraphsFile, resolveGraphs, type ResolveGraphsOptions, type ServedGraphSpec } from "./load-graphs.js";
export { messagesOf, pausedMessages } from "./paused-messages.js";
export { type CheckpointSummary, checkpointOf } from "./checkpoint-summary.js";
export { resumeInput, type RunInputValue } from "./resume-input.js";
export { allowedDecisions, type HitlDecision, type HitlRequest, matchActions, readHitlRequest } from "./hitl.js";
export { type ForkPoint, readForkPoint } from "./fork-point.js";
export type { AgentFactory, AgentInputs } from "./agent-factory.js";
