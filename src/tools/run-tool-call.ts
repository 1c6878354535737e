import type { StructuredToolInterface, ToolRunnableConfig } from "@langchain/core/tools";
import { isMcpTool } from "./mcp-hints.js";
import { StalePreview, stalePreviewError } from "./stale-preview.js";
import { ABORT_SIGNAL_KEY, callKey, PREVIEW_KEY, toolContext } from "./tool-context.js";
import { outputText } from "./tool-output.js";
import type { ToolCallRequest, ToolOutcome } from "./tool-outcome.js";

const NEVER_ABORTS = new AbortController().signal;

/** One call of a tool's own code: which call, the run's abort signal, and its thread. */
export interface InnerCall {
  call: { id: string };
  /** The run's abort signal, handed to the tool in `configurable` (none: it never aborts). */
  signal: AbortSignal | undefined;
  /** The thread the call belongs to; the config's `thread_id` when not given. */
  threadId?: string;
}

/**
 * The config a tool's own code is called with. The signal travels in `configurable`: the promise
 * settles when the tool's code does. The explicit never-firing signal keeps LangChain from
 * inheriting the caller's signal and racing it (a tool that ignores the abort and commits later
 * must still be recorded with what it did).
 */
export function innerConfig(config: ToolRunnableConfig, o: InnerCall): ToolRunnableConfig {
  const { call, signal } = o;
  const threadId = o.threadId ?? ((config.configurable as Record<string, unknown> | undefined)?.thread_id as string | undefined);
  const preview = (config.configurable as Record<string, unknown> | undefined)?.[PREVIEW_KEY];
  return {
    signal: NEVER_ABORTS,
    configurable: {
      thread_id: threadId,
      idempotency_key: threadId ? callKey(threadId, call.id) : call.id,
      [ABORT_SIGNAL_KEY]: signal,
      ...(preview !== undefined ? { [PREVIEW_KEY]: preview } : {}),
    },
  };
}

/** How `runInner` runs a call: the caller's config and signal, its thread, and the wrapping tool's run. */
export interface InnerRun {
  config: ToolRunnableConfig;
  signal: AbortSignal | undefined;
  /** The thread the call belongs to; the config's `thread_id` when not given. */
  threadId?: string;
  /** The run of a tool that wraps this one: the code runs inside it. */
  parent?: { run: unknown };
}

/**
 * Runs a tool's own code: a thrown error becomes an `error` outcome the model is told about; only
 * an abort the tool gave in to propagates, because the whole run is being stopped. Given the run
 * of a tool that wraps it (`parent`), the code runs inside that run (`_call`), so a call is one
 * traced run under the tool's name, not two.
 */
export async function runInner(tool: StructuredToolInterface, call: ToolCallRequest, o: InnerRun): Promise<ToolOutcome> {
  const { config, signal, threadId, parent } = o;
  try {
    const own = innerConfig(config, { call, signal, threadId });
    const result: unknown = parent ? await callOwnCode(tool, { args: call.args, run: parent.run, config: own }) : await tool.invoke(call.args, own);
    return { status: "ok", output: outputText(tool, result) };
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    // The tool found its approved preview out of date and did nothing: a code the model can read.
    if (err instanceof StalePreview) return { status: "error", error: stalePreviewError(err.message) };
    return { status: "error", error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * A wrapped tool's own code, inside the wrapping tool's run (`o.run`): its `_call`, which `invoke`
 * would reach after parsing the arguments (done already) and opening a traced run of its own
 * (the wrapper's is the call's one). A tool without one is invoked.
 *
 * An MCP tool gets the run's signal as `config.signal`, the one place its client looks: on a
 * cancel the request is dropped and the server told to stop. Nothing here races it, so the call
 * still settles when the client gives up, and the ledger records that.
 */
export function callOwnCode(tool: StructuredToolInterface, o: { args: unknown; run: unknown; config: ToolRunnableConfig }): Promise<unknown> {
  const { args, run } = o;
  const signal = toolContext(o.config).signal;
  const config = isMcpTool(tool) && signal ? { ...o.config, signal } : o.config;
  const code = (tool as unknown as { _call?: (args: unknown, run: unknown, config: ToolRunnableConfig) => Promise<unknown> })._call;
  return typeof code === "function" ? code.call(tool, args, run, config) : tool.invoke(args, config);
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
