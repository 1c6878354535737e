import { interopSafeParseAsync } from "@langchain/core/utils/types";
import { formatIssues, type IssueLike, type ToolStatus } from "../protocol/index.js";
import { ABORT_SIGNAL_KEY } from "./tollgate-tool.js";
import type { ToolRegistry } from "./tool-registry.js";

const NEVER_ABORTS = new AbortController().signal;

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
  /** The call ran with these top-level arguments changed by the person who approved it. */
  edited?: readonly string[];
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
    // The signal travels in `configurable`: the promise settles when the tool's code does. The
    // explicit never-firing signal keeps LangChain from inheriting the node's signal and racing it.
    const result: unknown = await entry.tool.invoke(call.args, {
      signal: NEVER_ABORTS,
      configurable: {
        thread_id: opts.threadId,
        idempotency_key: opts.threadId ? `${opts.threadId}:${call.id}` : call.id,
        [ABORT_SIGNAL_KEY]: opts.signal,
      },
    });
    return { status: "ok", output: stringifyOutput(result) };
  } catch (err) {
    // A tool that throws once the run is aborted stopped because of it: the run is being stopped.
    if (opts.signal?.aborted) throw opts.signal.reason ?? err;
    return { status: "error", error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Waits for `work`, but not past an abort: after the signal fires, the work gets one more turn of
 * the event loop to settle (a tool that honours the signal does), then the abort is thrown and
 * the work is left to finish on its own.
 */
const ABORTED = Symbol("aborted");

export async function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  work.catch(() => undefined); // settled later, by whoever still cares
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    onAbort = () => setImmediate(() => resolve(ABORTED));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const first = await Promise.race([work, aborted]);
    if (first === ABORTED) throw signal.reason;
    return first as T;
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}

/** The schema's validation message, or null when the arguments fit. */
export async function validateArgs(registry: ToolRegistry, call: ToolCallRequest): Promise<string | null> {
  const entry = registry.get(call.name);
  if (!entry) return `Tool '${call.name}' not found`;
  const parsed = await interopSafeParseAsync(entry.tool.schema as never, call.args);
  if (parsed.success) return null;
  const issues = (parsed.error as { issues?: IssueLike[] }).issues;
  if (!issues) return String(parsed.error);
  return formatIssues(issues);
}

function stringifyOutput(result: unknown): string {
  if (typeof result === "string") return result;
  // A tool may return a ToolMessage-like object; its content is what the model should read.
  if (result && typeof result === "object" && "content" in result && typeof result.content === "string") {
    return result.content;
  }
  return JSON.stringify(result ?? null);
}
