import type { LoggedEvent, RunStore } from "../store/index.js";

/** Tokens wait at most this many events or this long before they are written. */
export const MAX_UNFLUSHED = 256;
const MAX_DELAY_MS = 20;
/** After a failed write, the next try waits this long, doubling up to the cap. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2000;

/**
 * Batches run-event writes: tokens are queued and written together (one commit per flush, not
 * per token); every other event flushes the queue and itself before anyone sees it. A write the
 * database refuses (locked, full) leaves the events queued, in order, and is tried again with
 * backoff until it succeeds: a replay never misses an event the live stream showed.
 */
export class EventPersister {
  private pending = new Map<string, LoggedEvent[]>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(
    private readonly runs: RunStore,
    private readonly onError: (err: unknown, queued: number) => void,
  ) {}

  enqueue(runId: string, e: LoggedEvent): void {
    this.push(runId, e);
    if (this.failures) return; // the retry timer owns the next write
    if (this.count >= MAX_UNFLUSHED) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), MAX_DELAY_MS);
  }

  /** Writes everything queued plus `e` now; false when the database refused (kept for a retry). */
  persistNow(runId: string, e: LoggedEvent): boolean {
    this.push(runId, e);
    return this.flush();
  }

  /** Writes everything queued in one transaction; false when the database refused it. */
  flush(): boolean {
    try {
      this.flushOrThrow();
      return true;
    } catch {
      return false;
    }
  }

  /** Like `flush`, but throws the database's error (after queueing the retry). */
  flushOrThrow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    try {
      this.runs.appendBatches(this.pending); // one transaction: all of it or none
    } catch (err) {
      this.failures++;
      this.onError(err, this.count);
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (this.failures - 1));
      this.timer = setTimeout(() => this.flush(), delay);
      this.timer.unref();
      throw err;
    }
    this.pending = new Map();
    this.count = 0;
    this.failures = 0;
  }

  /** Events waiting to be written (after a refused write, until the retry succeeds). */
  get queued(): number {
    return this.count;
  }

  private push(runId: string, e: LoggedEvent): void {
    let list = this.pending.get(runId);
    if (!list) this.pending.set(runId, (list = []));
    list.push(e);
    this.count++;
  }
}
