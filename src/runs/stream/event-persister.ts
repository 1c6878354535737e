import type { LoggedEvent, RunStore } from "../../store/index.js";

/** A run's tokens wait at most this many events before they are written (the settler counts on it). */
export const MAX_UNFLUSHED = 256;
/** How long tokens wait at least, and at most: 1 ms for each run written by the last flush, in between. */
const MIN_DELAY_MS = 20;
const MAX_DELAY_MS = 250;
/** After a failed write, the next try waits this long, doubling up to the cap. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2000;

/**
 * Batches run-event writes: tokens are queued per run and written together (one commit per
 * flush, one row per run); every other event is written with its run's queue before anyone sees
 * it. A row costs the database about the same whatever its length, so the wait grows with the
 * runs streaming at once: with many, each row carries several tokens instead of one. A run's end
 * takes its own queue into the transaction that ends it (`take`), so ends do not flush everyone.
 *
 * Writes go one at a time, in order: a follower on another replica reads a run's log by seq, and
 * a later batch committed before an earlier one would make it skip the earlier. A write the
 * database refuses (locked, full, unreachable) leaves the events queued, in order, and is tried
 * again with backoff until it succeeds: a replay never misses an event the live stream showed.
 */
export class EventPersister {
  private pending = new Map<string, LoggedEvent[]>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Runs the last flush wrote: how many stream at once, so how long the next flush may wait. */
  private lastRuns = 0;
  /** The write in flight; the next one starts after it. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly runs: RunStore,
    private readonly onError: (err: unknown, queued: number) => void,
  ) {}

  enqueue(runId: string, e: LoggedEvent): void {
    const queued = this.push(runId, e);
    if (this.failures) return; // the retry timer owns the next write
    if (queued >= MAX_UNFLUSHED) void this.flush();
    else this.arm();
  }

  /** Writes `e` after its run's queue (and any write in flight); false when the database refused (kept for a retry). */
  persistNow(runId: string, e: LoggedEvent): Promise<boolean> {
    this.push(runId, e);
    return this.settle(this.write(runId));
  }

  /** Writes everything queued, after any write in flight; false when the database refused it. */
  flush(): Promise<boolean> {
    return this.settle(this.flushOrThrow());
  }

  /** Like `flush`, but rejects with the database's error (after queueing the retry). */
  flushOrThrow(): Promise<void> {
    return this.write(undefined);
  }

  /**
   * Takes a run's queued events out, once any write in flight has finished (it may hold earlier
   * ones of the run, or hand them back refused): the caller writes them, ahead of its own, in
   * one transaction. If that fails, `giveBack` returns them to the front of the queue.
   */
  async take(runId: string): Promise<LoggedEvent[]> {
    // A write chained while this one waited may hold the run's events: wait until none is in flight.
    for (let w = this.writing; ; w = this.writing) {
      await w;
      if (w === this.writing) break;
    }
    const events = this.pending.get(runId) ?? [];
    this.pending.delete(runId);
    this.count -= events.length;
    return events;
  }

  /** Puts back what `take` returned, ahead of anything queued for the run since. */
  giveBack(runId: string, events: LoggedEvent[]): void {
    if (!events.length) return;
    const later = this.pending.get(runId) ?? [];
    this.pending.set(runId, [...events, ...later]);
    this.count += events.length;
    if (!this.failures) this.arm();
  }

  /** Events waiting to be written (after a refused write, until the retry succeeds). */
  get queued(): number {
    return this.count;
  }

  private async settle(write: Promise<void>): Promise<boolean> {
    try {
      await write;
      return true;
    } catch {
      return false;
    }
  }

  /** Chains a write of one run's queue, or of every queue (`undefined`), after the one in flight. */
  private write(runId: string | undefined): Promise<void> {
    const next = this.writing.then(() => this.writeQueued(runId));
    this.writing = next.catch(() => undefined);
    return next;
  }

  private arm(): void {
    const delay = Math.min(MAX_DELAY_MS, Math.max(MIN_DELAY_MS, this.lastRuns));
    this.timer ??= setTimeout(() => void this.flush(), delay);
  }

  private async writeQueued(runId: string | undefined): Promise<void> {
    let batch: Map<string, LoggedEvent[]>;
    if (runId === undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      batch = this.pending;
      this.pending = new Map();
    } else {
      const own = this.pending.get(runId);
      batch = new Map(own ? [[runId, own]] : []);
      this.pending.delete(runId);
    }
    const taken = [...batch.values()].reduce((n, list) => n + list.length, 0);
    if (taken === 0) return;
    this.count -= taken;
    try {
      await this.runs.appendBatches(batch); // one transaction: all of it or none
    } catch (err) {
      // Back in front of what came meanwhile, in order.
      for (const [id, later] of this.pending) {
        const earlier = batch.get(id);
        if (earlier) earlier.push(...later);
        else batch.set(id, later);
      }
      this.pending = batch;
      this.count += taken;
      this.failures++;
      this.onError(err, this.count);
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1));
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.flush(), delay);
      this.timer.unref();
      throw err;
    }
    this.failures = 0;
    if (runId === undefined) this.lastRuns = batch.size;
    // Tokens that came during the write found a timer pending or none: they must not wait for the next event.
    if (this.count > 0) this.arm();
  }

  private push(runId: string, e: LoggedEvent): number {
    let list = this.pending.get(runId);
    if (!list) this.pending.set(runId, (list = []));
    list.push(e);
    this.count++;
    return list.length;
  }
}
