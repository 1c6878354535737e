import { defineTool, type TollgateTool } from "./tollgate-tool.js";

/**
 * A tool as served with `mcpHints: false`: one whose kind came from its MCP hints is made again as
 * `irreversible`, with the rest of its metadata; any other is returned as it is.
 */
export function withoutHints(tool: TollgateTool): TollgateTool {
  return tool.hinted && tool.kind !== "irreversible" ? defineTool(tool.inner, { ...tool.meta, kind: "irreversible" }) : tool;
}
