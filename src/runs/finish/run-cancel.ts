import { CANCEL_REASONS, refusals, type CancelReason } from "../../protocol/index.js";
import type { Principal } from "../../auth/index.js";
import type { ThreadRow, ThreadStatus } from "../../store/index.js";
import { RunCancelled } from "../run-abort.js";
import type { ActiveRun, RunContext } from "../run-context.js";
import { cancelRemoteRun } from "../stream/remote-run.js";
import { seeThread } from "../threads/thread-access.js";
import { closeInterrupt } from "./interrupt-closer.js";
import { storageUnavailable } from "./storage-errors.js";

export interface CancelResult {
  thread_id: string;
  cancelled: boolean;
  status: ThreadStatus;
}

/** What a cancel reads itself, and what closing the interrupt takes. */
export type CancelDeps = Pick<RunContext, "access" | "store" | "inFlight" | "settler"> & Parameters<typeof closeInterrupt>[0];

/**
 * Stops the run in flight (its model request and tools see the abort) or closes the open
 * interrupt. Idempotent; answers once the thread has settled.
 */
export async function cancelRun(ctx: CancelDeps, o: { p: Principal; threadId: string; reason: CancelReason }): Promise<CancelResult> {
  const { p, threadId, reason } = o;
  let thread = await seeThread(ctx, p, threadId);
  if (!ctx.access.owns(p, thread.owner)) {
    throw refusals.onlyOwnerCancels();
  }
  let cancelled = false;
  // Runs whose claim is still on its way to the database: each ends `cancelled` as it begins.
  const starting = [...ctx.inFlight.starting.values()].filter((s) => s.threadId === threadId);
  for (const s of starting) s.controller.abort(new RunCancelled(reason));
  for (const s of starting) {
    const started = await s.started;
    if (started) cancelled = (await stopLocal(started, reason)) || cancelled;
  }
  const run = ctx.inFlight.active.get(threadId);
  if (run) cancelled = (await stopLocal(run, reason)) || cancelled;
  // Read again after any local run ended: one that was committing its end as the cancel came
  // may have opened an interrupt, which the cancel still closes.
  if (run || starting.length) thread = (await ctx.store.threads.get(threadId)) ?? thread;
  if (thread.status === "waiting_human" && thread.open_interrupt_id) {
    const closed = await closeInterrupt(ctx, { threadId, interruptId: thread.open_interrupt_id, to: "cancelled", by: p.sub });
    cancelled = closed || cancelled;
    // Lost to a resume that began meanwhile (maybe on another replica): that run is the one to stop.
    if (!closed) thread = (await ctx.store.threads.get(threadId)) ?? thread;
  }
  if (thread.status === "running" && !ctx.inFlight.active.has(threadId)) cancelled = (await stopHeld(ctx, thread, reason)) || cancelled;
  const status = (await ctx.store.threads.get(threadId))!.status;
  // The run stopped, but the database has not taken its end yet: say so, so the caller retries.
  if (status === "running" && !ctx.inFlight.active.has(threadId) && ctx.settler.holds(threadId)) throw storageUnavailable();
  return { thread_id: threadId, cancelled, status };
}

async function stopLocal(run: ActiveRun, reason: CancelReason): Promise<boolean> {
  run.controller.abort(new RunCancelled(reason));
  await run.done;
  return run.outcome === "cancelled";
}

/** The thread is `running` with no run of this process in it: a run elsewhere, or a holder that could not finish. */
async function stopHeld(ctx: Pick<RunContext, "store" | "settler">, thread: ThreadRow, reason: CancelReason): Promise<boolean> {
  const { store, settler } = ctx;
  if (settler.holds(thread.thread_id) || thread.replica_id === store.replicas.id) {
    // Held by a run or closer here that could not finish its writes: settle it now if the
    // database allows (else this throws storage_unavailable, and a retry is safe).
    await settler.settleNow(thread.thread_id);
    return false;
  }
  // Another replica's: it hears the cancel and stops the run; its lease covers a dead one.
  if (!thread.holder_id) return false;
  const ended = await cancelRemoteRun(store, thread.holder_id, reason);
  return ended?.outcome === "cancelled";
}

/** A cancel another replica relayed: stops the run if it is this process's. */
export function relayedCancel(ctx: Pick<RunContext, "inFlight">, o: { runId: string; reason: string }): void {
  const { runId, reason } = o;
  const why = new RunCancelled((CANCEL_REASONS as readonly string[]).includes(reason) ? (reason as CancelReason) : "api");
  ctx.inFlight.starting.get(runId)?.controller.abort(why);
  for (const run of ctx.inFlight.active.values()) if (run.runId === runId) run.controller.abort(why);
}

/** The client of a stream went away: cancel if the run asked for that. */
export function clientGone(ctx: Pick<RunContext, "inFlight">, run: ActiveRun): void {
  if (run.onDisconnect === "cancel" && ctx.inFlight.active.get(run.threadId) === run) {
    run.controller.abort(new RunCancelled("client"));
  }
}
