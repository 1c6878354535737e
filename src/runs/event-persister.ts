import type { LoggedEvent, RunStore } from "../store/index.js";

/** Tokens wait at most this many events or this long before they are written. */
export const MAX_UNFLUSHED = 256;
const MAX_DELAY_MS = 20;
/** After a failed write, the next try waits this long, doubling up to the cap. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2000;

/**
 * Batches run-event writes: tokens are queued and written together (one commit per flush, not
 * per token); every other event is written with the queue before anyone sees it. Writes go one
 * at a time, in order: a follower on another replica reads a run's log by seq, and a later batch
 * committed before an earlier one would make it skip the earlier. A write the database refuses
 * (locked, full, unreachable) leaves the events queued, in order, and is tried again with backoff
 * until it succeeds: a replay never misses an event the live stream showed.
 */
export class EventPersister {
  private pending = new Map<string, LoggedEvent[]>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** The write in flight; the next one starts after it. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly runs: RunStore,
    private readonly onError: (err: unknown, queued: number) => void,
  ) {}

  enqueue(runId: string, e: LoggedEvent): void {
    this.push(runId, e);
    if (this.failures) return; // the retry timer owns the next write
    if (this.count >= MAX_UNFLUSHED) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), MAX_DELAY_MS);
  }

  /** Writes everything queued plus `e`; false when the database refused (kept for a retry). */
  persistNow(runId: string, e: LoggedEvent): Promise<boolean> {
    this.push(runId, e);
    return this.flush();
  }

  /** Writes everything queued, after any write in flight; false when the database refused it. */
  async flush(): Promise<boolean> {
    try {
      await this.flushOrThrow();
      return true;
    } catch {
      return false;
    }
  }

  /** Like `flush`, but rejects with the database's error (after queueing the retry). */
  flushOrThrow(): Promise<void> {
    const next = this.writing.then(() => this.writeQueued());
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** Events waiting to be written (after a refused write, until the retry succeeds). */
  get queued(): number {
    return this.count;
  }

  private async writeQueued(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    const batch = this.pending;
    const taken = this.count;
    this.pending = new Map();
    this.count = 0;
    try {
      await this.runs.appendBatches(batch); // one transaction: all of it or none
    } catch (err) {
      // Back in front of what came meanwhile, in order.
      for (const [runId, later] of this.pending) {
        const earlier = batch.get(runId);
        if (earlier) earlier.push(...later);
        else batch.set(runId, later);
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
    // Tokens that came during the write found a timer pending or none: they must not wait for the next event.
    if (this.count > 0) this.timer ??= setTimeout(() => void this.flush(), MAX_DELAY_MS);
  }

  private push(runId: string, e: LoggedEvent): void {
    let list = this.pending.get(runId);
    if (!list) this.pending.set(runId, (list = []));
    list.push(e);
    this.count++;
  }
}
