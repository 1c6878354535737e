import { closePendingCalls, ledgerKey, readGateState, runInputOf } from "../../graph/index.js";
import type { EventBody } from "../../protocol/index.js";
import { isStorageFault, type LoggedEvent, type StoreOps } from "../../store/index.js";
import type { ToolOutcome } from "../../tools/index.js";
import { toolResultEvent } from "../start/adapter.js";
import { MAX_UNFLUSHED } from "../stream/event-persister.js";
import { closerTarget, closingOutcome } from "../finish/interrupt-closer.js";
import type { RunContext, ThreadSettler } from "../run-context.js";
import type { Orphan } from "./orphan.js";
import { graphOfThread } from "../threads/thread-graph.js";
import { enqueueApprovalWebhook } from "../decide/approval-webhooks.js";

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * Hands threads back when their holder could not: answers the calls left open (from the ledger),
 * ends the run's log with exactly one terminal event and closes its row, and releases the thread,
 * all from what the next run will load. A write the database refuses is tried again with backoff
 * until it succeeds, so a thread is never left `running` with nothing running it. Used at
 * start-up (runs the previous process left in flight) and whenever a run cannot finish.
 */
export class Settler implements ThreadSettler {
  private readonly orphans = new Map<string, Orphan>();
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private waiters: Array<() => void> = [];
  /** Attempts run one at a time: two at once could answer the same call twice. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly ctx: RunContext) {}

  /** Settles `o` now if the database allows, else keeps trying. Never rejects. */
  async adopt(o: Orphan): Promise<void> {
    this.orphans.set(o.holderId, o);
    await this.serialized(() => this.retryAll());
  }

  /** Tries the thread's settling now; throws the storage fault if the database still refuses. */
  settleNow(threadId: string): Promise<void> {
    return this.serialized(async () => {
      for (const [holderId, o] of [...this.orphans]) {
        if (o.threadId !== threadId) continue;
        try {
          await settle(this.ctx, o);
        } catch (err) {
          if (!(err instanceof LostHold)) throw err;
        }
        this.orphans.delete(holderId);
      }
      this.wake();
    });
  }

  /** Whether the thread waits here to be settled. */
  holds(threadId: string): boolean {
    return [...this.orphans.values()].some((o) => o.threadId === threadId);
  }

  /** Whether this run's end waits here to be written (its live log is kept until then). */
  holdsRun(runId: string): boolean {
    return this.orphans.has(runId);
  }

  /** Resolves once nothing is waiting to be settled. */
  idle(): Promise<void> {
    if (this.orphans.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  get pending(): number {
    return this.orphans.size;
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private async retryAll(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    let refused = false;
    for (const [holderId, o] of [...this.orphans]) {
      try {
        await settle(this.ctx, o);
        this.orphans.delete(holderId);
      } catch (err) {
        if (err instanceof LostHold) {
          this.orphans.delete(holderId);
          this.ctx.inFlight.retire(holderId);
          continue;
        }
        if (!isStorageFault(err)) {
          // Not the database: retrying cannot help. Logged with the run id; start-up recovery
          // takes the thread over after a restart.
          this.ctx.log.error("could not settle a thread", { thread_id: o.threadId, run_id: holderId, err });
          this.orphans.delete(holderId);
          this.ctx.inFlight.retire(holderId);
          continue;
        }
        refused = true;
      }
    }
    if (refused) {
      this.failures++;
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1));
      if (this.failures === 1) this.ctx.log.warn("database refused to settle threads; retrying", { threads: this.orphans.size });
      this.timer = setTimeout(() => void this.serialized(() => this.retryAll()), delay);
      this.timer.unref();
    } else {
      this.failures = 0;
    }
    this.wake();
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private wake(): void {
    if (this.orphans.size) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** The thread moved on while this settler worked; the attempt is rolled back and dropped. */
class LostHold extends Error {}

/** One attempt; throws what the database throws. Safe to repeat: every write is compare-and-set. */
async function settle(ctx: RunContext, o: Orphan): Promise<void> {
  await settleState(ctx, o);
  // Until now, followers of the run read its events from memory; from now on, from the log.
  ctx.inFlight.retire(o.holderId);
}

async function settleState(ctx: RunContext, o: Orphan): Promise<void> {
  const { store } = ctx;
  const thread = await store.threads.get(o.threadId);
  // Held by this replica: a survivor that took the thread over (this one lost the database past
  // its lease) settles it, not this one.
  const holds = thread?.status === "running" && thread.holder_id === o.holderId && thread.replica_id === store.replicas.id;
  const runId = closerTarget(o.holderId) ? undefined : o.holderId;
  // Taken over by a survivor (this replica lost the database past its lease): the thread and the
  // run's end are the survivor's to write now.
  if (thread?.status === "running" && thread.holder_id === o.holderId && !holds) throw new LostHold();
  // Events still queued after refused writes go first, so a log with an end has everything before
  // it. Not inside the transaction below: the queue is dropped once written, and a rollback of an
  // outer transaction would undo the write after the queue forgot it.
  if (runId) await ctx.persister.flushOrThrow();
  if (holds && o.reopen && (await untouched(ctx, o.threadId, o.reopen.approved))) {
    await store.transaction(async (tx) => {
      const interruptId = o.reopen!.interruptId;
      await tx.interrupts.reopen(interruptId);
      // Released by no one else meanwhile (a survivor's takeover): else nothing here stands.
      if (!(await tx.threads.release(o.threadId, o.holderId, { to: "waiting_human", lastOutcome: null, openInterruptId: interruptId }))) throw new LostHold();
      // The trail must not keep a decision that never took effect as the last word on its calls.
      const record = await tx.interrupts.get(interruptId);
      const reason = "decision not applied (the database refused the run); waiting for a new one";
      if (record) await tx.audit.appendForEachCall(record, { decision: "superseded", by: null, reason });
      // Whoever heard it was decided hears it is waiting again (the same interrupt, requested anew).
      if (record) await enqueueApprovalWebhook(ctx, tx, { record, type: "approval.requested", at: ctx.clock.now() });
      if (runId) await endRun(ctx, tx, { runId, orphan: o, results: [] });
    });
    return;
  }
  // What the next run will load, settled from the ledger; a step whose checkpoint never came is committed.
  // A message run that died before its end was saved: its user message is only in its run row.
  const input = holds && runId ? runInputOf(await store.runs.get(runId)) : undefined;
  const closed = holds ? await closePendingCalls(await graphOfThread(ctx, o.threadId), { ledger: store.ledger, threadId: o.threadId, fallback: o.fallback, input }) : [];
  const closer = closerTarget(o.holderId);
  await store.transaction(async (tx) => {
    if (holds) await tx.threads.release(o.threadId, o.holderId, { to: "idle", lastOutcome: closer ?? "error" });
    if (runId) await endRun(ctx, tx, { runId, orphan: o, results: closed.map(toolResultEvent) });
  });
}

/** Closes the run's row and writes its terminal event (unless its log has one). Once: the close is a compare-and-set. */
async function endRun(ctx: Pick<RunContext, "redactor" | "settings">, tx: StoreOps, end: { runId: string; orphan: Orphan; results: EventBody[] }): Promise<void> {
  const { runId, orphan: o, results } = end;
  const { runs } = tx;
  if (!(await runs.end(runId, "error"))) return; // another replica's settler has ended it
  if (o.terminal) {
    await runs.append(runId, [o.terminal]);
  } else if (!(await runs.hasTerminal(runId))) {
    // Tokens may have reached a client without reaching the log (they are written in batches):
    // numbering resumes past any seq a client can have seen, so a reconnect with the last id it
    // got still receives the terminal event.
    let seq = (await runs.maxSeq(runId)) + MAX_UNFLUSHED + 1;
    const closing: EventBody = o.closing ?? { type: "error", code: "internal_error", message: "The server stopped during this run" };
    // Written straight to the store, not through a RunLog: redacted here, the same as there.
    await runs.append(
      runId,
      [...results, closing]
        .map((e) => ctx.redactor.event(e))
        .map(({ type, ...rest }) => ({ seq: seq++, type, data: JSON.stringify({ run_id: runId, ...rest }) })),
    );
  }
  await runs.prune(o.threadId, ctx.settings.eventRetentionRuns);
}

/** Whether the graph still waits at the gate with none of the approved calls started. */
async function untouched(ctx: Pick<RunContext, "graphs" | "store">, threadId: string, approved: string[]): Promise<boolean> {
  for (const id of approved) if (await ctx.store.ledger.peek(ledgerKey(threadId, id))) return false;
  const at = await readGateState(await graphOfThread(ctx, threadId), threadId);
  const open = new Set(at.calls.map((c) => c.id));
  return approved.every((id) => open.has(id));
}
