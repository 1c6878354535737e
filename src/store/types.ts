import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { ExecutionLedger } from "../ledger/index.js";
import type { CallEdit, CallProgress, InterruptProgress } from "../gate/index.js";
import type { AuditEntry, DecisionVia, EventType, InterruptPayload, LastOutcome, PendingCall, ThreadStatus } from "../protocol/index.js";

/**
 * What tollgate keeps, as interfaces: one SQLite file (the default) or one PostgreSQL database
 * shared by any number of replicas (`DATABASE_URL`). Nothing above `src/store` knows which.
 *
 * Every method is async (PostgreSQL is a network away). State changes are compare-and-set in SQL;
 * a read-then-write that must hold together runs inside `Store.transaction`.
 */

export type { LastOutcome, LoggedEvent, ThreadStatus } from "../protocol/index.js";
export type { CallEdit, CallProgress, InterruptProgress } from "../gate/index.js";
// The log's unit is the wire's: defined in protocol, next to the SSE frame it becomes.
import type { LoggedEvent } from "../protocol/index.js";

export interface ThreadRow {
  thread_id: string;
  status: ThreadStatus;
  last_outcome: LastOutcome | null;
  latest_run_id: string | null;
  /** Who holds the thread while it is `running`: a run id, or a closer's id. */
  holder_id: string | null;
  /** The replica whose process holds it while `running` (its lease says whether it lives). */
  replica_id: string | null;
  open_interrupt_id: string | null;
  metadata: string;
  /** The principal that created it. */
  owner: string;
  title: string | null;
  /** The graph that runs the thread, set at creation and kept for life ('agent' on older rows). */
  graph_id: string;
  created_at: number;
  updated_at: number;
}

/**
 * How a claim of an idle thread ended. A refusal says why in the store's terms; the runs layer
 * decides which error (and so which HTTP status) that is.
 */
export type IdleClaim = { ok: true } | { ok: false; reason: "not_found" | "awaiting_approval" | "busy" };

/** What a new thread starts with, besides its id and owner. */
export interface NewThreadOptions {
  /** Free-form metadata, stored as JSON (`{}` when not given). */
  metadata?: Record<string, unknown>;
  /** The graph that runs the thread ("agent" when not given). */
  graphId?: string;
}

/** Where a released thread goes. */
export interface ThreadRelease {
  to: Exclude<ThreadStatus, "running">;
  /** Null keeps the thread's last outcome as it is. */
  lastOutcome: LastOutcome | null;
  /** The interrupt it waits on (with `to: "waiting_human"`); none when not given. */
  openInterruptId?: string | null;
}

/** Threads and their status. Every status change is a compare-and-set in SQL. */
export interface ThreadStore {
  get(threadId: string): Promise<ThreadRow | undefined>;
  /** Creates the thread owned by `owner`; false (nothing written) if the id is taken. */
  create(threadId: string, owner: string, o?: NewThreadOptions): Promise<boolean>;
  /**
   * The thread, created for `owner` with graph `graphId` ("agent" when not given) if it did not
   * exist. An existing thread is returned as it is, its `graph_id` unchanged (a thread keeps its
   * graph for life): the caller compares it with the one it asked for.
   */
  ensure(threadId: string, owner: string, graphId?: string): Promise<ThreadRow>;
  /** Sets the title unless it has one (the first user message names the thread). */
  setTitle(threadId: string, title: string): Promise<void>;
  /** Threads newest first, after the `(updated_at, thread_id)` cursor; all owners when `owner` is null. */
  list(owner: string | null, limit: number, after?: { updatedAt: number; threadId: string }): Promise<ThreadRow[]>;
  /**
   * idle → running under `runId`, held by this replica; of two claims arriving together exactly
   * one wins. A refusal writes nothing and says why: no such thread, it waits for approval, or
   * it is running.
   */
  claimIdle(threadId: string, runId: string): Promise<IdleClaim>;
  /**
   * waiting_human → running, held by this replica, for a resume (`asRun`: it becomes the latest
   * run) or for closing an interrupt; false if another won.
   */
  claimWaiting(threadId: string, holderId: string, asRun: boolean): Promise<boolean>;
  /** running → idle | waiting_human, only by whoever holds the thread, on this replica (a survivor may have taken it over). */
  release(threadId: string, holderId: string, o: ThreadRelease): Promise<boolean>;
  listRunning(): Promise<ThreadRow[]>;
  /**
   * Thread `from` copied as `to`, owned by `owner` and idle: its metadata, title and graph, its
   * checkpoints, its audit trail, and its ledger entries under the copy's keys, so a call settled
   * on `from` is settled on the copy (and one in doubt stays in doubt there): none runs twice.
   * False, with nothing written, when `from` is missing or not idle, or `to` is taken.
   */
  copy(from: string, to: string, owner: string): Promise<boolean>;
}

export type InterruptStatus = "waiting_human" | "resumed" | "rejected" | "expired" | "cancelled";

/** A pending call as people are shown it (masked, with its policy), plus the hash binding approvals. */
export interface InterruptCall extends PendingCall {
  /** 1 when the interrupt opens, one more at each edit: an approval names the version it saw. */
  version: number;
  /** Hash of the full arguments; an approval is bound to it. */
  args_hash: string;
  /** Keyed hash of the full arguments, as the audit trail shows it. */
  audit_hash: string;
  /**
   * Asked by LangChain's HITL middleware: its interrupt, and the decisions it allows for the call.
   * The resume answers that interrupt with one decision per call, in the interrupt's order.
   */
  hitl?: { interrupt_id: string; allowed: readonly string[] };
  /** Keyed hash of the preview as shown: the audit records what the approver saw. */
  preview_hash?: string;
}

/** What a graph asked people with its own `interrupt(value)`: LangGraph's interrupt id, and the value (scrubbed). */
export interface InterruptQuestion {
  question_id: string;
  value: unknown;
}

export interface InterruptRecord {
  interrupt_id: string;
  thread_id: string;
  run_id: string;
  calls: InterruptCall[];
  /** Questions the graph asked beside (or instead of) the gate's calls; empty for most. */
  questions: InterruptQuestion[];
  status: InterruptStatus;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  /** Who sent the message that led to these calls (null in records of older versions). */
  requester: string | null;
  /** When people are told it still waits (`approval.escalated`); null: never. */
  escalate_at: number | null;
  /** When that was sent; null until then. */
  escalated_at: number | null;
  /** Decisions taken on single calls so far (an interrupt with a quorum call takes them one by one). */
  progress: InterruptProgress;
  /** How many times `progress` was written: what its compare-and-set compares. */
  progress_seq: number;
}

/** An interrupt as it opens: waiting, undecided, not escalated. */
export type NewInterrupt = Omit<InterruptRecord, "status" | "decided_at" | "escalated_at" | "progress" | "progress_seq">;

/** An open interrupt with the owner of its thread, for the approvals inbox. */
export interface OpenInterrupt extends InterruptRecord {
  owner: string;
}

/** What a transition out of `waiting_human` records, and the deadline it must beat. */
export interface InterruptTransition {
  /** The decisions taken, stored as JSON (none when not given). */
  decisions?: unknown;
  /** The transition happens only while the interrupt's deadline is after this time. */
  before?: number;
}

/** A compare-and-set write of an interrupt's per-call progress. */
export interface ProgressWrite {
  /** The `progress_seq` the progress was read at. */
  seenSeq: number;
  progress: InterruptProgress;
  /** Written only while the interrupt's deadline is after this time. */
  before: number;
}

/** Interrupt records. Transitions out of `waiting_human` are compare-and-set: one decider wins. */
export interface InterruptStore {
  create(r: NewInterrupt): Promise<void>;
  get(interruptId: string): Promise<InterruptRecord | undefined>;
  /**
   * waiting_human → `to`; false when it had already left waiting_human, or (with `o.before`) when
   * its deadline is not after `before`: a decision cannot win against the clock.
   */
  transition(interruptId: string, to: Exclude<InterruptStatus, "waiting_human">, o?: InterruptTransition): Promise<boolean>;
  /**
   * resumed | rejected → waiting_human: a decision whose run failed on storage before anything ran.
   * Its calls' progress goes with it: every call waits for new decisions (the trail says `superseded`).
   */
  reopen(interruptId: string): Promise<boolean>;
  listExpired(now: number): Promise<InterruptRecord[]>;
  /** Open interrupts whose escalation is due at `now` and not yet sent, before their deadline. */
  listDueEscalations(now: number): Promise<InterruptRecord[]>;
  /**
   * Writes the calls' progress if it is still what was read (`o.seenSeq`) and the interrupt is still
   * open before `o.before`; false otherwise (another decision, a close or the deadline came first).
   */
  recordProgress(interruptId: string, o: ProgressWrite): Promise<boolean>;
  /** Marks the escalation sent, once: false when it was already, or the interrupt is no longer open. */
  markEscalated(interruptId: string, at: number): Promise<boolean>;
  /** Interrupts still open for decisions at `now`, soonest deadline first. */
  listOpen(now: number): Promise<OpenInterrupt[]>;
  /** How many `listOpen(now)` would return, without reading them (the pending-approvals gauge). */
  countOpen(now: number): Promise<number>;
}

export type RunKind = "message" | "resume";

export interface RunRow {
  run_id: string;
  thread_id: string;
  started_at: number;
  ended_at: number | null;
  outcome: string | null;
  /** A message run's user message (`RunInput` as JSON), kept with the claim: checkpoints come only at the run's end. */
  input: string | null;
  /** The run's place on its thread, from 1 (0: a run stored before runs were numbered). */
  ordinal: number;
}

/** How a run starts, besides its id and thread. */
export interface NewRun {
  kind: RunKind;
  /** A message run's user message as JSON, written in the same commit as the claim. */
  input?: string;
}

/**
 * Runs and their event logs (for `Last-Event-ID` replay). Every append publishes a `run_events`
 * notice with the run id on the store's bus once committed, so followers elsewhere read it.
 */
export interface RunStore {
  start(runId: string, threadId: string, o: NewRun): Promise<void>;
  /** Closes the run's row; false when it was already closed (another settled it). */
  end(runId: string, outcome: string): Promise<boolean>;
  get(runId: string): Promise<RunRow | undefined>;
  /** The thread's runs, newest first. */
  listForThread(threadId: string, limit: number, offset: number): Promise<RunRow[]>;
  /** One transaction for the whole batch: the log costs one commit per flush, not per token. */
  appendBatches(batches: ReadonlyMap<string, readonly LoggedEvent[]>): Promise<void>;
  append(runId: string, events: readonly LoggedEvent[]): Promise<void>;
  read(runId: string, afterSeq: number): Promise<LoggedEvent[]>;
  /** -1 when nothing is logged. */
  maxSeq(runId: string): Promise<number>;
  /** Whether the run's log ends with a terminal event. */
  hasTerminal(runId: string): Promise<boolean>;
  /** Runs whose row is open though no thread is `running` under them: their process is gone. */
  listUnheld(): Promise<Array<{ run_id: string; thread_id: string }>>;
  /** Keeps the event logs of the thread's `keep` latest finished runs. */
  prune(threadId: string, keep: number): Promise<void>;
}

/** One decision on one pending call, as the run engine records it. */
export interface AuditRecord {
  thread_id: string;
  interrupt_id: string;
  call_id: string;
  tool: string;
  /** Keyed hash (`hash`) of the call's arguments as the model asked for them. */
  args_hash: string;
  /** For an edit: keyed hash of the arguments the call runs with. */
  edited_args_hash?: string;
  /** Keyed hash of the call's preview as shown: what the approver saw. */
  preview_hash?: string;
  /** The call's version the decision was taken on. */
  version?: number;
  decision: AuditEntry["decision"];
  /** The deciding principal; null for the system. */
  by: string | null;
  reason: string | null;
  /** How a person's decision came (`api`, `langgraph`, `slack`, `email`); absent for the system's. */
  via?: DecisionVia;
  /** The channel's own id of who decided (the Slack user id). */
  channel_user?: string;
  /** The ledger's hash of the arguments the call runs with, for approved calls: joins its execution. */
  run_args_hash?: string;
  at: number;
}

/**
 * One row of a thread's audit trail as the store reads it back (times in ms), with what the
 * ledger knows of the execution it approved; runs turns it into the wire's `AuditEntry`.
 */
export interface AuditTrailEntry extends Omit<AuditEntry, "at" | "executed"> {
  at: number;
  executed?: { status: NonNullable<AuditEntry["executed"]>["status"]; at: number };
}

/** The append-only audit trail (the database refuses updates and deletes). */
export interface AuditStore {
  /** Appends the rows; call inside the transaction that makes the decision. */
  append(records: readonly AuditRecord[]): Promise<void>;
  /** One row per pending call of `record`, all decided the same way (expiry, cancel, a voided decision). */
  appendForEachCall(record: InterruptRecord, how: Pick<AuditRecord, "decision" | "by" | "reason">, at?: number): Promise<void>;
  /** The thread's trail, oldest first, each approved call joined with what the ledger knows. */
  list(threadId: string): Promise<AuditTrailEntry[]>;
  /** Whether `sub` decided an interrupt of this thread (an approver keeps read access to it). */
  decidedBy(threadId: string, sub: string): Promise<boolean>;
  /** HMAC-SHA256 of canonical JSON under this database's key (made once per database). */
  hash(args: unknown): string;
}

/** Replica leases: which processes are alive, and taking over the threads of those that are not. */
export interface ReplicaStore {
  /** This process's replica id (new at every start). */
  readonly id: string;
  /**
   * Whether other processes share the store, so leases decide who is alive (PostgreSQL). False
   * (SQLite): this process is the only one, and what others left is orphaned at once.
   */
  readonly shared: boolean;
  /** Renews this replica's lease until `now + leaseMs` (PostgreSQL: on the database's clock). */
  heartbeat(now: number, leaseMs: number): Promise<void>;
  /** Threads `running` under a replica without a live lease at `now` (or under none). */
  listOrphaned(now: number): Promise<ThreadRow[]>;
  /**
   * Moves a thread held by a dead replica to this one (compare-and-set on holder and replica);
   * false when another survivor won or the thread moved on.
   */
  adopt(threadId: string, holderId: string, fromReplica: string | null): Promise<boolean>;
  /** Drops this replica's lease (a clean shutdown). */
  retire(): Promise<void>;
}

/** Notices between replicas. SQLite: within the process; PostgreSQL: LISTEN/NOTIFY. */
/**
 * `cancel`: a run to stop (key: run id). `run_events`: a run's log grew (key: run id). `thread`: a
 * run started on a thread or its open interrupt changed (key: thread id).
 */
export type NoticeChannel = "cancel" | "run_events" | "thread";

export interface ReplicaBus {
  /** Delivered to every subscriber on every replica (this one included), at most once each. */
  publish(channel: NoticeChannel, key: string, payload?: string): Promise<void>;
  subscribe(channel: NoticeChannel, listener: (key: string, payload: string) => void): () => void;
  /** False while notices may be lost (the listening connection is down): poll meanwhile. */
  readonly connected: boolean;
}

/** The ledger as the store keeps it: claims are durable before a tool runs. */
export type LedgerStore = ExecutionLedger;

export type WebhookStatus = "pending" | "delivered" | "failed";

/** One webhook delivery in the outbox: `body` is the exact JSON that is signed and sent. */
export interface WebhookDelivery {
  /** The delivery id (`X-Tollgate-Delivery`), the same on every attempt. */
  id: string;
  thread_id: string;
  /** Order within the thread: a delivery goes only after every earlier one of its thread is done. */
  seq: number;
  body: string;
  /** Attempts started so far (a claim counts one). */
  attempts: number;
  /** When it may be claimed next: due, retry time after a failure, or the end of a claim's lease. */
  next_attempt_at: number;
  status: WebhookStatus;
  /** Why the latest failed attempt failed (kept after a later success, for the record). */
  last_error: string | null;
  created_at: number;
  /** Which sender takes it: `webhook`, or a channel's (`slack`). Each lane keeps its own order per thread. */
  lane: string;
  /** What it is about (a channel's interrupt id), to find the receipt of an earlier delivery. */
  ref: string | null;
  /** What the receiver answered on delivery that later ones need (Slack's message `ts`). */
  receipt: string | null;
}

/** A channel's delivery: when it is due, its lane (a dead webhook must not hold Slack back), and what it is about. */
export interface OutboxLane {
  at: number;
  lane: string;
  ref?: string;
}

/** Claims in one lane (default `webhook`). */
export interface LaneClaim {
  limit: number;
  lane: string;
}

/**
 * The webhook outbox: a delivery is enqueued in the transaction of the state change it reports
 * (a crash loses none and invents none), then claimed and sent by the dispatcher, in order per
 * thread. Claims are leases: a claimer that dies has its delivery claimed again once the lease ends.
 */
export interface WebhookOutboxStore {
  /** Adds a delivery at the end of its thread's queue in its lane (a number: the webhook's, due then); returns its id. */
  enqueue(threadId: string, body: string, at: number | OutboxLane): Promise<string>;
  /**
   * Claims up to `limit` due deliveries, each the head (lowest pending seq) of its thread's queue:
   * counts an attempt and leases it until `now + leaseMs`. A delivery is claimed by one caller at a time.
   */
  claimDue(now: number, leaseMs: number, limit: number | LaneClaim): Promise<WebhookDelivery[]>;
  /** When the earliest head of a queue in `lane` (default `webhook`) comes due (undefined: nothing pending). */
  nextDueAt(lane?: string): Promise<number | undefined>;
  /**
   * Records the outcome of attempt `attempt` (compare-and-set on it: a claimer whose lease ran
   * out and was claimed again records nothing). `retryAt` undefined: delivered; a number: retry
   * then; "failed": given up. False when the attempt was not the latest any more.
   */
  settle(id: string, attempt: number, outcome: { delivered: true; receipt?: string } | { error: string; retryAt: number | "failed" }): Promise<boolean>;
  /** The receipt of the latest delivered delivery in `lane` about `ref` (undefined: none yet). */
  receipt(lane: string, ref: string): Promise<string | undefined>;
  get(id: string): Promise<WebhookDelivery | undefined>;
  /** The thread's deliveries in order. */
  list(threadId: string): Promise<WebhookDelivery[]>;
  /**
   * Deletes up to `limit` finished deliveries (delivered or failed) that finished before `before`,
   * and returns how many. A finished row's `next_attempt_at` is the end of its last attempt's
   * lease: when it finished, give or take a lease. A pending one is never deleted: it is owed.
   */
  prune(before: number, limit: number): Promise<number>;
  /** `listener` runs after each commit that enqueued (at once for an enqueue outside a transaction). */
  onEnqueued(listener: () => void): () => void;
}

/** The stores a transaction sees. */
export interface StoreOps {
  threads: ThreadStore;
  interrupts: InterruptStore;
  runs: RunStore;
  audit: AuditStore;
  webhooks: WebhookOutboxStore;
}

export interface Store extends StoreOps {
  readonly kind: "sqlite" | "postgres";
  ledger: LedgerStore;
  checkpointer: BaseCheckpointSaver;
  replicas: ReplicaStore;
  bus: ReplicaBus;
  /**
   * Runs `fn` in one transaction: all of its writes or none. `fn` must use only `tx` (on SQLite
   * the connection is held until it returns) and must not wait on anything but `tx`.
   */
  transaction<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T>;
  /** Whether the database answers a trivial read right now. */
  readable(): Promise<boolean>;
  close(): Promise<void>;
}
