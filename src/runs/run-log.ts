import { type EventBody, TERMINAL_TYPES } from "../protocol/index.js";
import type { LoggedEvent } from "../store/index.js";
import type { EventPersister } from "./event-persister.js";

/** What masks and scrubs an event before anyone sees it (see `Redactor`). */
export interface EventRedactor {
  event(body: EventBody): EventBody;
}

const terminal = new Set<string>(TERMINAL_TYPES);

/**
 * The events of one live run, numbered from 0. Each is redacted (sensitive fields masked, secrets
 * scrubbed) and serialized once, here; the same string goes to the database and to every
 * listener. Listeners never slow the run: they read at their own pace.
 */
export class RunLog {
  private readonly events: LoggedEvent[] = [];
  private waiters: Array<() => void> = [];
  private ended = false;

  constructor(
    readonly runId: string,
    private readonly persister: EventPersister,
    private readonly redactor: EventRedactor,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  /** Whether events after `seq` exist or may still come. */
  hasEventsAfter(seq: number): boolean {
    return !this.ended || seq < this.events.length - 1;
  }

  /**
   * Appends one non-terminal event. Token events are written in batches; any other is written
   * before listeners see it (or queued for a retry when the database refuses it).
   */
  append(body: EventBody): void {
    if (terminal.has(body.type)) throw new Error(`run ${this.runId}: '${body.type}' ends the log; use end()`);
    const e = this.build(body);
    if (e.type === "token") this.persister.enqueue(this.runId, e);
    else this.persister.persistNow(this.runId, e);
    this.publish(e);
  }

  /**
   * Ends the log with its terminal event. What is queued is written first; then `commit` writes
   * the event together with the state change that ends the run, in one transaction, so a crash
   * can never leave one without the other. Listeners see the event only once it is committed;
   * if the database refuses, this throws and nothing is published.
   */
  end(body: EventBody, commit: (e: LoggedEvent) => void): void {
    const e = this.build(body);
    this.persister.flushOrThrow();
    commit(e);
    this.publish(e);
  }

  /**
   * Ends the log for its listeners only, when the database would not take the end: the caller
   * must write the returned event later (with the same seq), when it settles the thread.
   */
  endUnstored(body: EventBody): LoggedEvent {
    const e = this.build(body);
    this.publish(e);
    return e;
  }

  private build(body: EventBody): LoggedEvent {
    if (this.ended) throw new Error(`run ${this.runId}: event '${body.type}' after the terminal event`);
    // The one exit: nothing unredacted is stored or published. Tokens skip it (free text, and hot).
    const { type, ...rest } = body.type === "token" ? body : this.redactor.event(body);
    return { seq: this.events.length, type, data: JSON.stringify({ run_id: this.runId, ...rest }) };
  }

  private publish(e: LoggedEvent): void {
    this.events.push(e);
    if (terminal.has(e.type)) this.ended = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Batches of events after `afterSeq`, as they come, until the terminal one. */
  async *follow(afterSeq: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    let next = Math.max(0, afterSeq + 1);
    let wake: (() => void) | undefined;
    // One listener for the whole follow, not one per wait: waits happen once per token.
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        if (next < this.events.length) {
          const batch = this.events.slice(next);
          next = this.events.length;
          yield batch;
          continue;
        }
        if (this.ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
          this.waiters.push(resolve);
        });
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }
}
