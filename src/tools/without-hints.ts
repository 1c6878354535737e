import { defineTool, type TollgateTool, type ToolMeta } from "./tollgate-tool.js";

/**
 * `toolMeta` as served with `mcpHints: false`: an entry that gives no kind waits at the gate
 * (`irreversible`), whatever the tool's MCP hints say.
 */
export function toolMetaWithoutHints(toolMeta: Readonly<Record<string, ToolMeta>> | undefined): Record<string, ToolMeta> | undefined {
  if (!toolMeta) return undefined;
  return Object.fromEntries(Object.entries(toolMeta).map(([name, meta]) => [name, meta.kind ? meta : { ...meta, kind: "irreversible" }]));
}

/**
 * A tool as served with `mcpHints: false`: one whose kind came from its MCP hints is made again as
 * `irreversible`, with the rest of its metadata; any other is returned as it is.
 */
export function withoutHints(tool: TollgateTool): TollgateTool {
  return tool.hinted && tool.kind !== "irreversible" ? defineTool(tool.inner, { ...tool.meta, kind: "irreversible" }) : tool;
}
