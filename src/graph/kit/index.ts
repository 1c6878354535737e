// `tollgate/graph`: tollgate's gate for a team's own StateGraph. Wire `gatedToolNodes(tools)` into
// any graph whose state has a `messages` channel; the server (or `langgraph dev`) does the rest.
export { gatedToolNodes, type GatedToolNodes, type GatedToolNodesOptions } from "./gated-tool-nodes.js";
export { type ApprovalRequest, isApprovalRequest } from "./call-tool-node.js";
export { CALL_TOOL_NODE, type MessagesState, TOOLS_NODE } from "../graph-state.js";
export { defineTool, TollgateTool, type ToolKind, type ToolMeta } from "../../tools/index.js";
