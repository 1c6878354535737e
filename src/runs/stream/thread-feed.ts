import type { Principal } from "../../auth/index.js";
import type { LoggedEvent } from "../../protocol/index.js";
import type { GraphFrame } from "./graph-frames.js";
import type { InterruptStatus, RunRow } from "../../store/index.js";
import type { RunContext } from "../run-context.js";
import { seeThread } from "../threads/thread-access.js";

/** How long a feed waits for a notice before it looks again (notices can be lost while the bus reconnects). */
const POLL_MS = 2_000;
/** Runs of a thread a feed reads at once; a thread streams from its latest run or from a `since`. */
const RUNS_PAGE = 500;

/** Where an interrupt stands, for a thread stream's events after the run that opened it. */
export interface InterruptState {
  status: InterruptStatus;
  /** How many decisions on single calls it took so far. */
  progressSeq: number;
}

/** How a feed reads a run's log (the run service's readers: live in this process, else stored). */
export interface RunLogReader {
  events(runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<LoggedEvent[]>;
  eventsWithFrames(runId: string, signal: AbortSignal): AsyncGenerator<Array<LoggedEvent | GraphFrame>>;
}

/**
 * A thread seen as one stream across its runs: its runs in order, each run's events, where the
 * interrupt a run stopped at stands, and a wake-up when a run starts or that interrupt changes (on
 * any replica). The thread-centric protocol reads threads only through this.
 */
export class ThreadFeed {
  constructor(
    private readonly ctx: RunContext,
    private readonly logs: RunLogReader,
  ) {}

  /**
   * Whether `p` may follow the thread: true, or false for a thread that does not exist yet (a
   * stream opened before `run.start` creates it waits). Someone else's thread is `thread_not_found`.
   */
  async exists(p: Principal, threadId: string): Promise<boolean> {
    if (!(await this.ctx.store.threads.get(threadId))) return false;
    await seeThread(this.ctx, p, threadId);
    return true;
  }

  /** The thread's runs numbered `ordinal` and later, oldest first. */
  async runsFrom(threadId: string, ordinal: number): Promise<RunRow[]> {
    const newestFirst = await this.ctx.store.runs.listForThread(threadId, RUNS_PAGE, 0);
    return newestFirst.filter((r) => r.ordinal >= ordinal).reverse();
  }

  /** The thread's latest run, or undefined before its first. */
  async latestRun(threadId: string): Promise<RunRow | undefined> {
    return (await this.ctx.store.runs.listForThread(threadId, 1, 0))[0];
  }

  /** A run's event batches after `afterSeq`, live until its terminal event. */
  events(runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    return this.logs.events(runId, afterSeq, signal);
  }

  /**
   * A run's event batches from its start, with the chunks of its graph's stream it records in their
   * places while it is live in this process (see `FrameRequest`); the stored events alone otherwise.
   */
  eventsWithFrames(runId: string, signal: AbortSignal): AsyncGenerator<Array<LoggedEvent | GraphFrame>> {
    return this.logs.eventsWithFrames(runId, signal);
  }

  /** Whether a run's first events are still kept (older runs' logs are pruned). */
  async logKept(runId: string): Promise<boolean> {
    return (await this.ctx.store.runs.maxSeq(runId)) >= 0;
  }

  async interrupt(interruptId: string): Promise<InterruptState | undefined> {
    const r = await this.ctx.store.interrupts.get(interruptId);
    return r && { status: r.status, progressSeq: r.progress_seq };
  }

  /**
   * Notices for the thread (a run started, its interrupt changed), from now on: read after
   * watching, so that a change between a read and the wait is not missed.
   */
  watch(threadId: string): ThreadWatch {
    return new ThreadWatch((listener) => this.ctx.store.bus.subscribe("thread", (key) => key === threadId && listener()));
  }
}

/** Wakes a thread stream when its thread changes; `close` when the stream ends. */
export class ThreadWatch {
  private noticed = false;
  private wake: (() => void) | undefined;
  readonly close: () => void;

  constructor(subscribe: (listener: () => void) => () => void) {
    this.close = subscribe(() => {
      this.noticed = true;
      this.wake?.();
    });
  }

  /** Resolves at once if a notice came since the last wait; else at the next, a poll interval later, or on abort. */
  wait(signal: AbortSignal): Promise<void> {
    if (this.noticed || signal.aborted) {
      this.noticed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        this.noticed = false;
        resolve();
      };
      const timer = setTimeout(done, POLL_MS);
      this.wake = done;
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
