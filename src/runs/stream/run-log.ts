import { type EventBody, TERMINAL_TYPES } from "../../protocol/index.js";
import { NO_METER, type RunMeter, type TokenFilter } from "../../ops/index.js";
import type { LoggedEvent } from "../../store/index.js";
import type { EventPersister } from "./event-persister.js";
import type { GraphFrame, TappedChunk } from "./graph-frames.js";

/** What masks and scrubs an event before anyone sees it (see `Redactor`). */
export interface EventRedactor {
  event(body: EventBody): EventBody;
  /** Scrubs one stream of tokens, which `event` lets pass: secrets split across tokens included. */
  tokenFilter(): TokenFilter;
}

/** Where a run log's events go: the writer, and the redactor each passes first. */
export interface RunLogOptions {
  persister: EventPersister;
  redactor: EventRedactor;
  /** Counts the run's token events (metrics); none when not given. */
  meter?: RunMeter;
}

const terminal = new Set<string>(TERMINAL_TYPES);

/**
 * The events of one live run, numbered from 0. Each is redacted (sensitive fields masked, secrets
 * scrubbed) and serialized once, here; the same string goes to the database and to every
 * listener. Listeners never slow the run: they read at their own pace.
 */
export class RunLog {
  private readonly events: LoggedEvent[] = [];
  /** How many events listeners may see: a non-token event (and all after it) waits for its write. */
  private visible = 0;
  /** Indexes of non-token events whose write has not finished. */
  private readonly unwritten = new Set<number>();
  private waiters: Array<() => void> = [];
  private wakeQueued = false;
  /** Chunks of the graph's own stream a LangGraph API client asked for: kept in memory (see `RecentFrames`), never stored. */
  private readonly frames: GraphFrame[] = [];
  private ended = false;
  /** The terminal event is being committed: nothing more is appended. */
  private ending = false;
  /** The run's streamed text on its way out, scrubbed; what may still begin a secret is held. */
  private readonly tokens: TokenFilter;

  private readonly persister: EventPersister;
  private readonly redactor: EventRedactor;
  private readonly meter: RunMeter;

  constructor(readonly runId: string, o: RunLogOptions) {
    this.persister = o.persister;
    this.redactor = o.redactor;
    this.meter = o.meter ?? NO_METER;
    this.tokens = o.redactor.tokenFilter();
  }

  get isEnded(): boolean {
    return this.ended || this.ending;
  }

  /** Whether events after `seq` exist or may still come. */
  hasEventsAfter(seq: number): boolean {
    return !this.ended || seq < this.events.length - 1;
  }

  /**
   * Appends one non-terminal event, numbered now. Token events are written in batches; any other
   * is written before listeners see it (or, when the database refuses it, queued for a retry and
   * shown): listeners see events in order, so tokens after it wait with it.
   */
  append(body: EventBody): void {
    if (terminal.has(body.type)) throw new Error(`run ${this.runId}: '${body.type}' ends the log; use end()`);
    if (this.ending) {
      if (body.type === "token") return; // a late token of a model that was cut off
      throw new Error(`run ${this.runId}: event '${body.type}' while the run ends`);
    }
    if (body.type === "token") {
      const text = this.tokens.push(body.text);
      if (text) this.add(text === body.text ? body : { ...body, text }); // most tokens pass as they came
      return;
    }
    this.flushTokens();
    this.add(body);
  }

  /**
   * Places a frame after the last event appended, masked and serialized when a listener first
   * reads it. Listeners that follow frames see it once that event is visible; a late frame of a
   * run that is ending is dropped.
   */
  frame(f: TappedChunk): void {
    if (this.isEnded) return;
    const after = this.events.length - 1;
    const last = this.frames.at(-1);
    this.frames.push(lazyFrame(f, { after, n: last?.after === after ? last.n + 1 : 0 }));
    this.wake();
  }

  /** The frames recorded so far, in order. */
  get keptFrames(): readonly GraphFrame[] {
    return this.frames;
  }

  /** What the token filter still holds goes out before any other event: nothing is lost or reordered. */
  private flushTokens(): void {
    const text = this.tokens.flush();
    if (text) this.add({ type: "token", text });
  }

  private add(body: EventBody): void {
    const e = this.build(body);
    const index = this.events.push(e) - 1;
    if (e.type === "token") {
      this.meter.token();
      this.persister.enqueue(this.runId, e);
      if (this.unwritten.size === 0) this.show(this.events.length);
      return;
    }
    this.unwritten.add(index);
    void this.persister.persistNow(this.runId, e).then(() => {
      this.unwritten.delete(index);
      this.show(this.unwritten.size ? Math.min(...this.unwritten) : this.events.length);
    });
  }

  /**
   * Ends the log with its terminal event: `commit` writes the run's queued events and the terminal
   * one together with the state change that ends the run, in one transaction, so a crash can never
   * leave one without the other. Listeners see the event only once it is committed;
   * if the database refuses, this throws and nothing is published.
   */
  async end(body: EventBody, commit: (events: LoggedEvent[]) => Promise<void>): Promise<void> {
    if (!this.ending) this.flushTokens();
    const e = this.build(body);
    this.ending = true;
    let queued: LoggedEvent[] = [];
    try {
      queued = await this.persister.take(this.runId);
      await commit([...queued, e]);
    } catch (err) {
      this.persister.giveBack(this.runId, queued);
      this.ending = false;
      throw err;
    }
    this.publishEnd(e);
  }

  /**
   * Ends the log for its listeners only, when the database would not take the end: the caller
   * must write the returned event later (with the same seq), when it settles the thread.
   */
  endUnstored(body: EventBody): LoggedEvent {
    if (!this.ending) this.flushTokens();
    const e = this.build(body);
    this.publishEnd(e);
    return e;
  }

  private build(body: EventBody): LoggedEvent {
    if (this.ended) throw new Error(`run ${this.runId}: event '${body.type}' after the terminal event`);
    // The one exit: nothing unredacted is stored or published. Tokens went through the token
    // filter instead (hot, and a secret may be split across them).
    const { type, ...rest } = body.type === "token" ? body : this.redactor.event(body);
    return { seq: this.events.length, type, data: JSON.stringify({ run_id: this.runId, ...rest }) };
  }

  private publishEnd(e: LoggedEvent): void {
    this.events.push(e);
    this.ended = true;
    this.unwritten.clear(); // written before the end, or kept by the persister for its retry
    this.show(this.events.length);
  }

  private show(upTo: number): void {
    if (upTo <= this.visible) return;
    this.visible = upTo;
    this.wake();
  }

  /**
   * Listeners wake once the work that made events visible has run its course (the microtasks of
   * this turn's callback: a model's socket read, say), not at each event: a burst then goes out
   * as one write. Waking at each token sent one write, and one syscall, per token.
   */
  private wake(): void {
    if (this.wakeQueued || this.waiters.length === 0) return;
    this.wakeQueued = true;
    process.nextTick(() => {
      this.wakeQueued = false;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    });
  }

  /** Batches of events after `afterSeq`, as they come, until the terminal one. */
  follow(afterSeq: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    let next = Math.max(0, afterSeq + 1);
    return this.batches(() => {
      if (next >= this.visible) return undefined;
      const batch = this.events.slice(next, this.visible);
      next = this.visible;
      return batch;
    }, signal);
  }

  /**
   * Like `follow` from the start, with the frames in their places: each right after the event it
   * follows, before the next one.
   */
  followWithFrames(signal?: AbortSignal): AsyncGenerator<Array<LoggedEvent | GraphFrame>> {
    let next = 0;
    let nextFrame = 0;
    return this.batches(() => {
      const batch: Array<LoggedEvent | GraphFrame> = [];
      for (;;) {
        const f = this.frames[nextFrame];
        if (f && f.after < next) {
          batch.push(f);
          nextFrame++;
        } else if (next < this.visible) {
          batch.push(this.events[next++]!);
        } else {
          return batch.length ? batch : undefined;
        }
      }
    }, signal);
  }

  /**
   * What `take` has for a listener, as it comes, until the log has ended and `take` has nothing
   * left; stops when `signal` fires. Returned as is (not wrapped in another generator): a wrapper's
   * `yield*` would cost promises per batch.
   */
  private async *batches<T>(take: () => T[] | undefined, signal?: AbortSignal): AsyncGenerator<T[]> {
    let wake: (() => void) | undefined;
    // One listener for the whole follow, not one per wait: waits happen once per token.
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        const batch = take();
        if (batch) {
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

/**
 * A frame whose data is the chunk shown when first read. The chunk goes once shown: nothing here
 * but `chunk` refers to it (a closure naming the argument would hold it for the frame's life).
 */
function lazyFrame(f: TappedChunk, place: { after: number; n: number }): GraphFrame {
  let chunk: TappedChunk | undefined = f;
  let shown = "";
  return {
    kind: "frame",
    mode: f.mode,
    namespace: f.namespace,
    ...place,
    get data() {
      if (chunk) [shown, chunk] = [chunk.show(), undefined];
      return shown;
    },
  };
}
