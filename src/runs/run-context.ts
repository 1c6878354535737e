import type { Access } from "../auth/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { Metrics, Redactor, SecretScrubber } from "../ops/index.js";
import type { Store } from "../store/index.js";
import type { ToolRegistry } from "../tools/index.js";
import type { GraphCatalog, RunGate, ServedGraph } from "../graph/index.js";
import type { EventPersister } from "./event-persister.js";
import type { RunLog } from "./run-log.js";
import type { Orphan } from "./orphan.js";
import type { FrameRequest } from "./graph-frames.js";

export interface RunSettings {
  approvalTtlMs: number;
  /** When a waiting call is escalated, for tools that do not say; undefined: never. */
  approvalEscalateMs?: number;
  maxRounds: number;
  eventRetentionRuns: number;
  /** Approval webhooks configured: each interrupt change enqueues one in its own transaction. */
  webhooks?: boolean;
}

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

export interface RunContextOptions {
  graphs: GraphCatalog;
  store: Store;
  registry: ToolRegistry;
  settings: RunSettings;
  log: Logger;
  access: Access;
  /** The secrets to scrub (`config.secrets`); by default only what looks like a credential. */
  scrubber?: SecretScrubber;
  clock?: Clock;
  metrics?: Metrics;
}

/**
 * Hands back threads whose run or closer could not (a dead process, a refused write): see
 * `Settler`, which `createRunContext` makes.
 */
export interface ThreadSettler {
  /** Settles `o` now if the database allows, else keeps trying. Never rejects. */
  adopt(o: Orphan): Promise<void>;
  /** Tries the thread's settling now; throws the storage fault if the database still refuses. */
  settleNow(threadId: string): Promise<void>;
  /** Whether the thread waits here to be settled. */
  holds(threadId: string): boolean;
  /** Whether this run's end waits here to be written. */
  holdsRun(runId: string): boolean;
  /** Resolves once nothing is waiting to be settled. */
  idle(): Promise<void>;
  readonly pending: number;
  stop(): void;
}

/**
 * What the run machinery shares: its dependencies plus the in-flight runs of this process. Made
 * by `createRunContext`; every module of the runs layer takes it as a parameter.
 */
export interface RunContext {
  /** By thread: at most one per thread, enforced by the SQL claim. */
  readonly active: Map<string, ActiveRun>;
  /** By run id: runs whose claim is being written (see `RunService.begin`). */
  readonly starting: Map<string, StartingRun>;
  /** Holder ids of interrupt closers at work in this process. */
  readonly closing: Set<string>;
  /** By run id: live logs that listeners can follow. */
  readonly live: Map<string, RunLog>;
  readonly persister: EventPersister;
  readonly settler: ThreadSettler;
  /** Masks sensitive fields and scrubs secrets from every event and view that leaves. */
  readonly redactor: Redactor;
  readonly graphs: GraphCatalog;
  readonly store: Store;
  /** Every tool the served graphs use, by name: kinds, masks, policies. */
  readonly registry: ToolRegistry;
  readonly settings: RunSettings;
  readonly log: Logger;
  /** Who may see, run, decide and cancel what. */
  readonly access: Access;
  /** Where "now" comes from for deadlines (the store stamps its rows with the same one). */
  readonly clock: Clock;
  /** Where runs, tokens, decisions and cancels are counted (`/metrics`). */
  readonly metrics: Metrics;
  /** A graph called an irreversible tool without a live approval: the tool refused; say so. */
  gateRefused(run: Pick<ActiveRun, "runId" | "threadId" | "graph">, call: { id: string; name: string }): void;
}
