import { maskPaths } from "./mask-args.js";

/**
 * What a tool answering `[content, artifact]` (LangChain's `content_and_artifact`, as every MCP
 * tool does) said: the text the model is told and `tool_result` shows, and the artifact, which
 * never reaches the model.
 */
export interface SplitOutput {
  text: string;
  artifact: unknown;
}

/** Whether a tool answers `[content, artifact]` rather than its content alone. */
export function answersWithArtifact(tool: unknown): boolean {
  return (tool as { responseFormat?: unknown } | undefined)?.responseFormat === "content_and_artifact";
}

/**
 * A tool's result as the text tollgate keeps (the ledger's outcome, the model's copy, what
 * `tool_result` shows): for a tool answering content and artifact, the content's text; otherwise
 * a string as it is, a message's string content, or anything else as JSON.
 */
export function outputText(tool: unknown, result: unknown): string {
  if (answersWithArtifact(tool)) return splitOutput(result).text;
  if (typeof result === "string") return result;
  // A tool may return a ToolMessage-like object; its content is what the model should read.
  if (result && typeof result === "object" && "content" in result && typeof result.content === "string") return result.content;
  return JSON.stringify(result ?? null);
}

/**
 * Splits a content-and-artifact result. The text is that of the content's text blocks (an MCP
 * server's text content); a block of another kind (an image, a file) is named, not inlined, since
 * its bytes are no text for a person or a log. With no text at all, the structured content, as
 * JSON, is the text: the MCP spec has a server send it both ways, and a server that did not
 * still tells the model something. Masking by `sensitiveOutput` then applies to that text where
 * it is JSON, as to any tool's output.
 */
export function splitOutput(result: unknown): SplitOutput {
  const [content, artifact] = Array.isArray(result) && result.length === 2 ? result : [result, undefined];
  const text = contentText(content);
  const structured = structuredContentOf(content, artifact);
  return { text: text === "" && structured !== undefined ? JSON.stringify(structured) : text, artifact };
}

/**
 * An artifact as tollgate keeps it on a tool message: the MCP structured content in it masked by
 * the tool's `sensitiveOutput` paths, since a tool message is stored and shown, and nothing reads
 * an artifact but people and graphs.
 */
export function maskedArtifact(artifact: unknown, paths: readonly string[]): unknown {
  if (paths.length === 0 || !Array.isArray(artifact)) return artifact;
  return artifact.map((item: unknown) => (isStructured(item) ? { ...item, data: maskPaths(item.data, paths).value } : item));
}

/** The text of a tool's content: a string, a block, or a list of blocks. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(blockText).filter((t) => t !== "").join("\n");
  if (content && typeof content === "object") return blockText(content);
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

function blockText(block: unknown): string {
  if (typeof block === "string") return block;
  if (!block || typeof block !== "object") return "";
  const b = block as { type?: unknown; text?: unknown };
  if (typeof b.text === "string") return b.text;
  return typeof b.type === "string" ? `[${b.type}]` : "";
}

/** The MCP structured content of a result: on its text block (one text block) or in its artifact. */
function structuredContentOf(content: unknown, artifact: unknown): unknown {
  const onBlock = content && typeof content === "object" && !Array.isArray(content) ? (content as { structuredContent?: unknown }).structuredContent : undefined;
  if (onBlock !== undefined) return onBlock;
  return Array.isArray(artifact) ? (artifact.find(isStructured) as { data: unknown } | undefined)?.data : undefined;
}

const isStructured = (item: unknown): item is { type: "mcp_structured_content"; data: unknown } =>
  !!item && typeof item === "object" && (item as { type?: unknown }).type === "mcp_structured_content";
