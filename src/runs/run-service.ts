import { refusals, type CancelReason } from "../protocol/index.js";
import type { Principal } from "../auth/index.js";
import type { LoggedEvent } from "../store/index.js";
import type { ActiveRun, RunContext } from "./run-context.js";
import { RunAdmission } from "./start/run-admission.js";
import { startMessage, type MessageRequest } from "./start/start-message.js";
import type { StartDoor } from "./start/start-door.js";
import { startResume } from "./decide/start-resume.js";
import type { ResumeRequest, WaitingGate } from "./decide/resume-gate.js";
import { cancelRun, clientGone, relayedCancel, type CancelResult } from "./finish/run-cancel.js";
import { stopEveryRun } from "./finish/run-shutdown.js";
import type { GraphFrame } from "./stream/graph-frames.js";
import { hasEventsAfter, runEvents, runEventsWithFrames } from "./stream/run-events.js";
import { ThreadFeed } from "./stream/thread-feed.js";

/**
 * Starts, resumes, cancels and follows runs. The only way anything runs on a thread. Each method
 * hands its work to the folder that does it; the service holds what they share: whether it is
 * shutting down, the admission limits, and the feed.
 */
export class RunService {
  private closing = false;
  private threadFeed: ThreadFeed | undefined;
  private readonly unsubscribe: () => void;
  private readonly door: StartDoor = {
    refuseIfClosing: () => {
      if (this.closing) throw refusals.shuttingDown();
    },
    admit: (sub) => this.admission.admit(sub),
  };

  /** `admission`: the run-rate and concurrency limits (none when not given). */
  constructor(
    private readonly ctx: RunContext,
    private readonly admission: RunAdmission = new RunAdmission({ perMinute: 0, maxConcurrent: Number.POSITIVE_INFINITY, inFlight: () => 0 }),
  ) {
    this.unsubscribe = ctx.store.bus.subscribe("cancel", (runId, reason) => relayedCancel(ctx, { runId, reason }));
  }

  /** A new user message from `p` (see `startMessage`). */
  startMessage(p: Principal, req: MessageRequest): Promise<ActiveRun> {
    return startMessage(this.ctx, { p, req, door: this.door });
  }

  /** The one door every face's decision comes through (see `startResume`). */
  startResume(p: Principal, request: ResumeRequest): Promise<ActiveRun | WaitingGate> {
    return startResume(this.ctx, { p, request, door: this.door });
  }

  /** Stops the run in flight or closes the open interrupt (see `cancelRun`). */
  cancel(p: Principal, threadId: string, reason: CancelReason = "api"): Promise<CancelResult> {
    return cancelRun(this.ctx, { p, threadId, reason });
  }

  /** The client of a stream went away: cancel if the run asked for that. */
  clientGone(run: ActiveRun): void {
    clientGone(this.ctx, run);
  }

  /** Event batches of a run after `afterSeq`: live ones as they come, or the stored log of a finished run. */
  events(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    return runEvents(this.ctx, { runId, afterSeq, signal });
  }

  /** A run's events from its start with the frames it records (see `runEventsWithFrames`). */
  eventsWithFrames(runId: string, signal?: AbortSignal): AsyncGenerator<Array<LoggedEvent | GraphFrame>> {
    return runEventsWithFrames(this.ctx, { runId, signal });
  }

  /** The thread-centric view of threads: runs in order, their events, and notices of change. */
  get feed(): ThreadFeed {
    return (this.threadFeed ??= new ThreadFeed(this.ctx, this));
  }

  /** Whether a stream after `afterSeq` has anything to send: false once the terminal event is behind it. */
  hasEventsAfter(runId: string, afterSeq: number): Promise<boolean> {
    return hasEventsAfter(this.ctx, { runId, afterSeq });
  }

  /** Resolves once no thread waits for the database to take its settling writes. */
  settled(): Promise<void> {
    return this.ctx.settler.idle();
  }

  /** Refuses new starts, then cancels every run in flight with reason `shutdown`; open interrupts stay as they are. */
  async shutdown(): Promise<void> {
    this.closing = true;
    this.unsubscribe();
    await stopEveryRun(this.ctx);
  }
}
