import { closingOutcomes, type ToolOutcome } from "../../protocol/index.js";
import { closerTarget, closingOutcome } from "../finish/interrupt-closer.js";
import type { RunContext } from "../run-context.js";

const RESTARTED: ToolOutcome = closingOutcomes.restarted();

/**
 * Takes over what dead processes left: every thread `running` under a replica without a live
 * lease (SQLite: any process but this one) is closed as `error` at what its next run will load
 * (a step whose checkpoint never came is committed first). Calls it left open are answered from
 * the ledger: run → their result, caught mid-run → "outcome unknown", never started → not
 * executed. Nothing is re-run. Every run row left open without a thread under it is closed, its
 * log ended with exactly one terminal event. Of several survivors sweeping at once, one takes
 * each thread (compare-and-set). Returns how many threads it took over.
 */
export async function recoverInterruptedRuns(ctx: RunContext, now = ctx.clock.now()): Promise<number> {
  const { replicas, runs } = ctx.store;
  let taken = 0;
  for (const t of await replicas.listOrphaned(now)) {
    const holderId = t.holder_id ?? "";
    if (heldHere(ctx, holderId)) continue; // alive in this process, whatever the row says
    if (!(await replicas.adopt(t.thread_id, holderId, t.replica_id))) continue; // another survivor's
    taken++;
    // A closer that died mid-way finishes what it was doing: its interrupt is already decided.
    const closing = closerTarget(holderId);
    await ctx.settler.adopt({ threadId: t.thread_id, holderId, fallback: closing ? closingOutcome(closing) : RESTARTED });
    ctx.log.warn("closed a run a process that is gone left in flight", { thread_id: t.thread_id, run_id: holderId });
  }
  // Threads this replica holds that nothing here runs any more: the database lost the end a
  // run committed (a crash of a server that acknowledged commits before writing them), say.
  for (const t of await ctx.store.threads.listRunning()) {
    const holderId = t.holder_id ?? "";
    if (t.replica_id !== replicas.id || heldHere(ctx, holderId)) continue;
    const closing = closerTarget(holderId);
    await ctx.settler.adopt({ threadId: t.thread_id, holderId, fallback: closing ? closingOutcome(closing) : RESTARTED });
    ctx.log.warn("closed a run this process no longer ran", { thread_id: t.thread_id, run_id: holderId });
  }
  // Runs that ended without closing their row (a thread released by an older version, say).
  for (const r of await runs.listUnheld()) {
    if (ctx.inFlight.active.has(r.thread_id) || heldHere(ctx, r.run_id)) continue;
    await ctx.settler.adopt({ threadId: r.thread_id, holderId: r.run_id, fallback: RESTARTED });
  }
  return taken;
}

/** Whether this process runs, starts or settles `holderId` itself. */
function heldHere(ctx: Pick<RunContext, "inFlight" | "settler">, holderId: string): boolean {
  if (ctx.inFlight.starting.has(holderId) || ctx.inFlight.closing.has(holderId) || ctx.settler.holdsRun(holderId)) return true;
  for (const run of ctx.inFlight.active.values()) if (run.runId === holderId) return true;
  return false;
}
