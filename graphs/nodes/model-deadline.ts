import type { AIMessageChunk } from "@langchain/core/messages";

/** How long a model call may go without output. */
export interface ModelTimeouts {
  /** From the request until the first output. */
  firstTokenMs: number;
  /** Between two outputs, once the first has come. */
  idleMs: number;
}

export const DEFAULT_MODEL_TIMEOUTS: ModelTimeouts = { firstTokenMs: 60_000, idleMs: 30_000 };

/**
 * One model call's deadline. Its signal aborts the call (and so its socket) when the model sends
 * no output in time. Only real output moves the deadline: SSE comments and keep-alives never
 * reach LangChain as chunks, and a chunk with nothing in it (the role chunk, usage, a bare
 * finish_reason) does not count either, so a server that only keeps the connection warm still
 * times out.
 */
export class ModelDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;
  private sawOutput = false;
  /** Which deadline passed, once one has. */
  expired: "first_token" | "idle" | undefined;

  constructor(private readonly timeouts: ModelTimeouts) {
    this.timer = setTimeout(() => this.expire(), timeouts.firstTokenMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Notes one streamed chunk; output pushes the deadline back by the idle timeout. */
  observe(chunk: AIMessageChunk): void {
    if (this.expired || !hasOutput(chunk)) return;
    if (this.sawOutput) {
      this.timer.refresh(); // restarts the idle timer: cheaper than a new timer per token
      return;
    }
    this.sawOutput = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), this.timeouts.idleMs);
  }

  /** The call is over, one way or another. */
  stop(): void {
    clearTimeout(this.timer);
  }

  /** A one-line reason for the person, in whole seconds where possible. */
  describe(): string {
    return this.expired === "first_token"
      ? `Model timed out: no output within ${seconds(this.timeouts.firstTokenMs)} of the request`
      : `Model timed out: no output for ${seconds(this.timeouts.idleMs)} in the middle of its answer`;
  }

  private expire(): void {
    this.expired = this.sawOutput ? "idle" : "first_token";
    this.controller.abort(new Error(this.describe()));
  }
}

/**
 * Output is text, a tool call's name or arguments (Chat Completions semantics 9), or reasoning:
 * reasoning models (DeepSeek-R1, QwQ, servers with a reasoning parser) stream their thinking as
 * `reasoning_content` for a long time before the first word of the answer.
 */
function hasOutput(chunk: AIMessageChunk): boolean {
  const c = chunk.content;
  if (typeof c === "string" ? c.length > 0 : c.length > 0) return true;
  if ((chunk.tool_call_chunks ?? []).some((t) => !!t.name || !!t.args)) return true;
  const k = chunk.additional_kwargs;
  return !!k && (nonEmpty(k.reasoning_content) || nonEmpty(k.reasoning));
}

function nonEmpty(v: unknown): boolean {
  return typeof v === "string" ? v.length > 0 : v != null && typeof v === "object" && Object.keys(v).length > 0;
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
