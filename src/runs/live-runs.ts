import type { Clock } from "../clock.js";
import type { RunGate, ServedGraph } from "../graph/index.js";
import type { FrameRequest } from "./stream/graph-frames.js";
import { RecentFrames } from "./stream/recent-frames.js";
import type { RunLog } from "./stream/run-log.js";

/** A run in flight: owns the thread until it ends. */
export interface ActiveRun {
  runId: string;
  threadId: string;
  /** The thread's graph. */
  graph: ServedGraph;
  /** The approvals this run carries; closed when it ends. */
  gate: RunGate;
  log: RunLog;
  controller: AbortController;
  /** Settles when the run has ended and released the thread; never rejects. */
  done: Promise<void>;
  onDisconnect: "cancel" | "continue";
  /** How it ended, once it has. */
  outcome?: string;
  /** Who started it: the sender of its message, or who decided the interrupt it resumes (logs name them). */
  principal: string;
  /** Who sent the message this run continues: an interrupt it opens is theirs to not approve (four eyes). */
  requester: string;
  /** For a resume: its interrupt and the calls it approved (a failed write must not use them up). */
  resume?: { interruptId: string; approved: string[] };
  /** What of its graph's own stream it records beside its events, when a client asked. */
  frames?: FrameRequest;
  /** The earlier checkpoint it starts from (a fork); absent: the thread's head. */
  from?: string;
}

/** A run whose claim is on its way to the database. */
export interface StartingRun {
  threadId: string;
  controller: AbortController;
  /** The run once launched; undefined when its claim was refused. */
  started: Promise<ActiveRun | undefined>;
}

/**
 * This process's runs in flight, by what each part of the machinery looks them up by. Kept apart
 * from the dependencies the machinery uses (`RunContext`): the only state that changes as runs
 * come and go.
 */
export class LiveRuns {
  /** By thread: at most one per thread, enforced by the SQL claim. */
  readonly active = new Map<string, ActiveRun>();
  /** By run id: runs whose claim is being written (see `beginRun`, start/run-launch.ts). */
  readonly starting = new Map<string, StartingRun>();
  /** Holder ids of interrupt closers at work in this process. */
  readonly closing = new Set<string>();
  /** By run id: live logs that listeners can follow. */
  readonly logs = new Map<string, RunLog>();
  /** The frames of runs that ended here, for a stream that replays one soon after. */
  readonly recentFrames: RecentFrames;

  constructor(clock: Clock) {
    this.recentFrames = new RecentFrames(clock);
  }

  /** A run's log is no longer followed live: its readers go to the stored log, its frames stay a while. */
  retire(runId: string): void {
    const log = this.logs.get(runId);
    if (!log) return;
    this.logs.delete(runId);
    this.recentFrames.keep(runId, log.keptFrames);
  }
}
