import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ToolRunnableConfig } from "@langchain/core/tools";
import type { ApprovalPolicy } from "../protocol/index.js";

/** `read` tools run at once; `irreversible` tools run only after a person approves the exact call. */
export type ToolKind = "read" | "irreversible";

/**
 * A standard LangChain tool plus what tollgate needs to know about it. Teams wrap the tools they
 * already have; nothing about the tool itself changes.
 */
export interface TollgateTool {
  tool: StructuredToolInterface;
  kind: ToolKind;
  /** Dotted argument paths (e.g. "card.number") masked in every event and view. */
  sensitive?: readonly string[];
  /**
   * Dotted paths into the tool's output, when it is a JSON object or array (e.g.
   * "customer.email"), masked in every event and view. The model still reads the real output.
   */
  sensitiveOutput?: readonly string[];
  /**
   * Who may approve a call (irreversible tools): `owner` — the thread's owner or an approver;
   * `approver` — only an approver who is not the thread's owner (four eyes). Default `owner`.
   */
  policy?: ApprovalPolicy;
  /** Whether an approver may change the call's arguments (`edited_args`) before it runs. */
  editable?: boolean;
}

export interface ToolMeta {
  kind: ToolKind;
  sensitive?: readonly string[];
  sensitiveOutput?: readonly string[];
  policy?: ApprovalPolicy;
  editable?: boolean;
}

export function defineTool(tool: StructuredToolInterface, meta: ToolMeta): TollgateTool {
  return {
    tool,
    kind: meta.kind,
    sensitive: meta.sensitive ?? [],
    sensitiveOutput: meta.sensitiveOutput ?? [],
    policy: meta.policy ?? "owner",
    editable: meta.editable ?? false,
  };
}

/** What a tool receives besides its arguments. */
export interface ToolContext {
  signal: AbortSignal | undefined;
  /** `thread_id:call_id`: the same for every attempt at one approved call; pass it downstream. */
  idempotencyKey: string | undefined;
  threadId: string | undefined;
}

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
  };
}

/** Throws the signal's reason when it has fired: tools call this right before committing. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("aborted");
}
