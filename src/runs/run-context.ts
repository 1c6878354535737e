import type { AgentGraph } from "../../graphs/agent.js";
import type { Logger } from "../logger.js";
import type { Store } from "../store/index.js";
import type { ToolRegistry } from "../tools/index.js";
import { EventPersister } from "./event-persister.js";
import type { RunLog } from "./run-log.js";

export interface RunSettings {
  approvalTtlMs: number;
  maxRounds: number;
  eventRetentionRuns: number;
}

/** A run in flight: owns the thread until it ends. */
export interface ActiveRun {
  runId: string;
  threadId: string;
  log: RunLog;
  controller: AbortController;
  /** Settles when the run has ended and released the thread; never rejects. */
  done: Promise<void>;
  onDisconnect: "cancel" | "continue";
  /** How it ended, once it has. */
  outcome?: string;
}

/** What the run machinery shares: its dependencies plus the in-flight runs of this process. */
export class RunContext {
  /** By thread: at most one per thread, enforced by the SQL claim. */
  readonly active = new Map<string, ActiveRun>();
  /** By run id: live logs that listeners can follow. */
  readonly live = new Map<string, RunLog>();
  readonly persister: EventPersister;

  constructor(
    readonly graph: AgentGraph,
    readonly store: Store,
    readonly registry: ToolRegistry,
    readonly settings: RunSettings,
    readonly log: Logger,
  ) {
    this.persister = new EventPersister(store.runs, (err) => log.error("run event log write failed", { err }));
  }
}
