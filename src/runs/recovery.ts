import type { ToolOutcome } from "../tools/index.js";
import { toolResultEvent } from "./adapter.js";
import { MAX_UNFLUSHED } from "./event-persister.js";
import { closerTarget, closingOutcome } from "./interrupt-closer.js";
import { closePendingCalls } from "./pending-calls.js";
import type { RunContext } from "./run-context.js";

const RESTARTED: ToolOutcome = { status: "error", error: "not executed: the server restarted" };

/**
 * At start-up, before serving: every thread the last process left `running` is closed as
 * `error` at its last checkpoint. Calls it left open are answered from the ledger: run → their
 * result, caught mid-run → "outcome unknown", never started → not executed. Nothing is re-run.
 */
export async function recoverInterruptedRuns(ctx: RunContext): Promise<number> {
  const threads = ctx.store.threads.listRunning();
  for (const t of threads) {
    const runId = t.holder_id ?? "";
    // A closer that died mid-way finishes what it was doing: its interrupt is already decided.
    const closing = closerTarget(runId);
    const fallback = closing ? closingOutcome(closing) : RESTARTED;
    const messages = await closePendingCalls(ctx.graph, ctx.store.ledger, t.thread_id, fallback).catch((err: unknown) => {
      ctx.log.error("recovery could not close pending calls", { thread_id: t.thread_id, err });
      return [];
    });
    if (runId === t.latest_run_id) logClosing(ctx, runId, messages.map(toolResultEvent));
    ctx.store.threads.release(t.thread_id, runId, "idle", closing ?? "error");
    if (!closing) ctx.store.runs.end(runId, "error");
    ctx.log.warn("closed a run the previous process left in flight", { thread_id: t.thread_id, run_id: runId });
  }
  return threads.length;
}

/**
 * Appends the closing events to the dead run's log. Tokens may have reached a client without
 * reaching the log (they are written in batches), so numbering resumes past any seq a client
 * can have seen: a reconnect with the last id it got still receives the terminal event.
 */
function logClosing(ctx: RunContext, runId: string, results: ReturnType<typeof toolResultEvent>[]): void {
  let seq = ctx.store.runs.maxSeq(runId) + MAX_UNFLUSHED + 1;
  const rows = [
    ...results,
    { type: "error" as const, code: "internal_error", message: "The server stopped during this run" },
  ].map(({ type, ...rest }) => ({ seq: seq++, type, data: JSON.stringify({ run_id: runId, ...rest }) }));
  ctx.store.runs.append(runId, rows);
}

