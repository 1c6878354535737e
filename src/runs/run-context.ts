import type { Access } from "../auth/index.js";

export type { ActiveRun, StartingRun } from "./live-runs.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { ApprovalWebhook } from "../protocol/index.js";
import type { Metrics, Redactor, Sealer, SecretScrubber } from "../ops/index.js";
import type { Store } from "../store/index.js";
import type { ToolRegistry } from "../tools/index.js";
import type { GraphCatalog } from "../graph/index.js";
import type { EventPersister } from "./stream/event-persister.js";
import type { ActiveRun, LiveRuns } from "./live-runs.js";
import type { Orphan } from "./recovery/orphan.js";

export interface RunSettings {
  approvalTtlMs: number;
  /** When a waiting call is escalated, for tools that do not say; undefined: never. */
  approvalEscalateMs?: number;
  maxRounds: number;
  eventRetentionRuns: number;
  /** Approval webhooks configured: each interrupt change enqueues one in its own transaction. */
  webhooks?: boolean;
  /** Channels configured (Slack, email): each interrupt change enqueues its deliveries in each lane, in the same transaction. */
  channels?: readonly ChannelLane[];
}

/** A channel's lane in the outbox, and what one change of an interrupt puts in it. */
export interface ChannelLane {
  lane: string;
  /**
   * The deliveries for one change, worked out inside its transaction (so they are owed if and
   * only if it commits). Default: the webhook's body once, about the interrupt.
   */
  deliveries?(change: ApprovalWebhook, o: { owner: string; requester: string | null; partial: boolean }): Array<{ ref: string; body: string }>;
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
  /** Default: none, so an edit that would need sealing is refused. */
  sealer?: Sealer;
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
  /** This process's runs in flight: the machinery's only mutable state, apart from what it uses. */
  readonly inFlight: LiveRuns;
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
  /** Seals what the database must not hold in clear (an edit's sensitive values while its call waits). */
  readonly sealer: Sealer;
  /** A graph called an irreversible tool without a live approval: the tool refused; say so. */
  gateRefused(run: Pick<ActiveRun, "runId" | "threadId" | "graph">, call: { id: string; name: string }): void;
}
