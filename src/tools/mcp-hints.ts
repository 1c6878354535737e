/** What `@langchain/mcp-adapters` puts on a tool it loads: the server's annotations, if any. */
interface McpToolLike {
  responseFormat?: unknown;
  metadata?: Record<string, unknown>;
}

/**
 * Whether a tool was loaded from an MCP server by `@langchain/mcp-adapters`: it answers content and
 * artifact, and keeps the server's annotations (present even when the server gave none) in its
 * metadata.
 */
export function isMcpTool(tool: unknown): boolean {
  const t = tool as McpToolLike | undefined;
  return !!t && t.responseFormat === "content_and_artifact" && !!t.metadata && Object.hasOwn(t.metadata, "annotations");
}

/**
 * The kind a tool's MCP hints give it when nobody gave one: `read` only for `readOnlyHint: true`;
 * anything else (destructive, no hint, no annotations, a tool from no MCP server) waits at the gate,
 * so a server that says nothing about a tool gets no call past a person.
 */
export function kindFromHints(tool: unknown): "read" | "irreversible" {
  const annotations = (tool as McpToolLike | undefined)?.metadata?.annotations as { readOnlyHint?: unknown } | undefined;
  return annotations?.readOnlyHint === true ? "read" : "irreversible";
}
