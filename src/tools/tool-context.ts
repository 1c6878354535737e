import type { ToolRunnableConfig } from "@langchain/core/tools";

/**
 * `thread_id:call_id`: the execution ledger's key for a call, and the idempotency key its tool
 * gets: the same for every attempt at one approved call.
 */
export const callKey = (threadId: string, callId: string) => `${threadId}:${callId}`;

/** What a tool receives besides its arguments. */
export interface ToolContext {
  signal: AbortSignal | undefined;
  /** `thread_id:call_id`: the same for every attempt at one approved call; pass it downstream. */
  idempotencyKey: string | undefined;
  threadId: string | undefined;
  /**
   * What the person saw when approving this call, as its tool's `preview` showed it (masked by
   * `sensitiveOutput`); undefined for a tool without one. Compare it with the world before acting,
   * and throw `StalePreview` if it no longer holds.
   */
  preview: unknown;
}

/** `configurable` key of the approved call's preview (see `ToolContext.preview`). */
export const PREVIEW_KEY = "tollgate_preview";

/**
 * `configurable` key of the run's abort signal. It is not passed as `config.signal`: LangChain
 * would then reject the tool's promise at the abort while the tool's code runs on, and the run
 * could not tell whether the call had its effect.
 */
export const ABORT_SIGNAL_KEY = "abort_signal";

/** Reads tollgate's context from the config a LangChain tool function is called with. */
export function toolContext(config: ToolRunnableConfig | undefined): ToolContext {
  const c = (config?.configurable ?? {}) as Record<string, unknown>;
  const signal = c[ABORT_SIGNAL_KEY];
  return {
    signal: signal instanceof AbortSignal ? signal : config?.signal,
    idempotencyKey: typeof c.idempotency_key === "string" ? c.idempotency_key : undefined,
    threadId: typeof c.thread_id === "string" ? c.thread_id : undefined,
    preview: c[PREVIEW_KEY],
  };
}

/** Throws the signal's reason when it has fired: tools call this right before committing. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("aborted");
}
