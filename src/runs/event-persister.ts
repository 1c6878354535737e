import type { LoggedEvent, RunStore } from "../store/index.js";

/** Tokens wait at most this many events or this long before they are written. */
export const MAX_UNFLUSHED = 256;
const MAX_DELAY_MS = 20;

/**
 * Batches run-event writes: tokens are queued and written together (one commit per flush, not
 * per token); every other event flushes the queue and itself before anyone sees it.
 */
export class EventPersister {
  private pending = new Map<string, LoggedEvent[]>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runs: RunStore,
    private readonly onError: (err: unknown) => void,
  ) {}

  enqueue(runId: string, e: LoggedEvent): void {
    this.push(runId, e);
    if (this.count >= MAX_UNFLUSHED) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), MAX_DELAY_MS);
  }

  /** Writes everything queued plus `e`, synchronously. */
  persistNow(runId: string, e: LoggedEvent): void {
    this.push(runId, e);
    this.flush();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    const batches = this.pending;
    this.pending = new Map();
    this.count = 0;
    try {
      this.runs.appendBatches(batches);
    } catch (err) {
      this.onError(err);
    }
  }

  private push(runId: string, e: LoggedEvent): void {
    let list = this.pending.get(runId);
    if (!list) this.pending.set(runId, (list = []));
    list.push(e);
    this.count++;
  }
}
