import type { ToolCall } from "@langchain/core/messages/tool";
import { LinkedAbortController } from "../../lib/index.js";
import type { InterruptCall } from "../../store/index.js";
import type { ActiveRun, RunContext } from "../run-context.js";

/** How long a tool's preview may take before the call is shown without it. */
export const PREVIEW_DEADLINE_MS = 10_000;

/** A call's preview as people see it, with the keyed hash of what is shown; or why there is none. */
export type ShownPreview = Pick<InterruptCall, "preview" | "preview_error" | "preview_hash">;

/**
 * Each gated call's preview, from its tool's `preview` (those without one show none), all at once:
 * with the run's signal and a deadline, masked by the tool's `sensitiveOutput` and scrubbed of
 * secrets, with the keyed hash of what is shown (the approval is bound to it). A preview that
 * throws, times out or gives nothing JSON can carry shows `preview_error` instead, the call's
 * sensitive argument values masked in it: the call may still be decided.
 */
export async function takePreviews(ctx: RunContext, run: ActiveRun, calls: readonly ToolCall[]): Promise<Map<string, ShownPreview>> {
  const on = { signal: run.controller.signal, threadId: run.threadId };
  const taken = await Promise.all(calls.map(async (c) => [c.id!, await previewOf(ctx, on, c)] as const));
  return new Map(taken.filter(([, shown]) => shown !== undefined) as Array<[string, ShownPreview]>);
}

/** One call's preview (see `takePreviews`); undefined for a tool without one. */
export async function previewOf(
  ctx: RunContext,
  on: { signal: AbortSignal; threadId: string },
  call: Pick<ToolCall, "name" | "args"> & { id?: string | undefined },
): Promise<ShownPreview | undefined> {
  const preview = ctx.registry.previewOf(call.name);
  if (!preview) return undefined;
  const link = new LinkedAbortController([on.signal]);
  const timer = setTimeout(() => link.abort(new Error(`preview took longer than ${PREVIEW_DEADLINE_MS / 1000} s`)), PREVIEW_DEADLINE_MS);
  const signal = link.signal;
  try {
    const gaveUp = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    gaveUp.catch(() => {}); // an abort after the preview answered is nobody's business
    const value = await Promise.race([Promise.resolve().then(() => preview(call.args, { signal, threadId: on.threadId, callId: call.id ?? "" })), gaveUp]);
    const text = JSON.stringify(value);
    if (text === undefined) return { preview_error: "the preview gave nothing to show" };
    const shown = ctx.redactor.scrubber.scrubDeep(JSON.parse(ctx.registry.maskOutput(call.name, text)) as unknown);
    return { preview: shown, preview_hash: ctx.store.audit.hash(shown) };
  } catch (err) {
    // Masked before it is cut short: a value cut in half would no longer be found.
    const message = ctx.registry.maskError(call.name, call.args, err instanceof Error ? err.message : String(err));
    return { preview_error: ctx.redactor.scrubber.scrub(message).slice(0, 200) };
  } finally {
    clearTimeout(timer);
    link.unlink();
  }
}
