import type { ToolOutcome } from "../tools/index.js";
import { closerTarget, closingOutcome } from "./interrupt-closer.js";
import type { RunContext } from "./run-context.js";

const RESTARTED: ToolOutcome = { status: "error", error: "not executed: the server restarted" };

/**
 * At start-up, before serving: every thread the last process left `running` is closed as `error`
 * at what its next run will load (a step whose checkpoint never came is committed first). Calls
 * it left open are answered from the ledger: run → their result, caught mid-run → "outcome
 * unknown", never started → not executed. Nothing is re-run. Every run row the last process left
 * open is closed, its log ended with exactly one terminal event. Returns how many threads it closed.
 */
export async function recoverInterruptedRuns(ctx: RunContext): Promise<number> {
  const threads = ctx.store.threads.listRunning();
  for (const t of threads) {
    const holderId = t.holder_id ?? "";
    // A closer that died mid-way finishes what it was doing: its interrupt is already decided.
    const closing = closerTarget(holderId);
    await ctx.settler.adopt({ threadId: t.thread_id, holderId, fallback: closing ? closingOutcome(closing) : RESTARTED });
    ctx.log.warn("closed a run the previous process left in flight", { thread_id: t.thread_id, run_id: holderId });
  }
  // Runs that ended without closing their row (a thread released by an older version, say).
  for (const r of ctx.store.runs.listOpen()) {
    await ctx.settler.adopt({ threadId: r.thread_id, holderId: r.run_id, fallback: RESTARTED });
  }
  return threads.length;
}
