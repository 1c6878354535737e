import { interopSafeParseAsync } from "@langchain/core/utils/types";
import type { ToolStatus } from "../protocol/index.js";
import type { ToolRegistry } from "./tool-registry.js";

export interface ToolCallRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** How one call ended, before it becomes a ToolMessage and a `tool_result`. */
export interface ToolOutcome {
  status: ToolStatus;
  output?: string;
  error?: string;
}

export interface RunToolOptions {
  signal?: AbortSignal;
  threadId?: string;
}

/**
 * Validates and runs one call. Unknown tools, bad arguments and thrown errors become outcomes
 * the model is told about; only an abort propagates, because the whole run is being stopped.
 */
export async function runToolCall(
  registry: ToolRegistry,
  call: ToolCallRequest,
  opts: RunToolOptions,
): Promise<ToolOutcome> {
  const entry = registry.get(call.name);
  if (!entry) return { status: "error", error: `Tool '${call.name}' not found` };
  const validationError = await validateArgs(registry, call);
  if (validationError) return { status: "invalid_args", error: validationError };
  try {
    const result: unknown = await entry.tool.invoke(call.args, {
      signal: opts.signal,
      configurable: {
        thread_id: opts.threadId,
        idempotency_key: opts.threadId ? `${opts.threadId}:${call.id}` : call.id,
      },
    });
    return { status: "ok", output: stringifyOutput(result) };
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? err;
    return { status: "error", error: err instanceof Error ? err.message : String(err) };
  }
}

/** The schema's validation message, or null when the arguments fit. */
export async function validateArgs(registry: ToolRegistry, call: ToolCallRequest): Promise<string | null> {
  const entry = registry.get(call.name);
  if (!entry) return `Tool '${call.name}' not found`;
  const parsed = await interopSafeParseAsync(entry.tool.schema as never, call.args);
  if (parsed.success) return null;
  const issues = (parsed.error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues;
  if (!issues) return String(parsed.error);
  return issues.map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message)).join("; ");
}

function stringifyOutput(result: unknown): string {
  if (typeof result === "string") return result;
  // A tool may return a ToolMessage-like object; its content is what the model should read.
  if (result && typeof result === "object" && "content" in result && typeof result.content === "string") {
    return result.content;
  }
  return JSON.stringify(result ?? null);
}
