import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { ExecutionLedger } from "../ledger/index.js";
import type { AuditEntry, EventType, InterruptPayload, LastOutcome, PendingCall, ThreadStatus } from "../protocol/index.js";

/**
 * What tollgate keeps, as interfaces: one SQLite file (the default) or one PostgreSQL database
 * shared by any number of replicas (`DATABASE_URL`). Nothing above `src/store` knows which.
 *
 * Every method is async (PostgreSQL is a network away). State changes are compare-and-set in SQL;
 * a read-then-write that must hold together runs inside `Store.transaction`.
 */

export type { LastOutcome, ThreadStatus } from "../protocol/index.js";

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
  created_at: number;
  updated_at: number;
}

/** Threads and their status. Every status change is a compare-and-set in SQL. */
export interface ThreadStore {
  get(threadId: string): Promise<ThreadRow | undefined>;
  /** Creates the thread owned by `owner`; false (nothing written) if the id is taken. */
  create(threadId: string, owner: string, metadata?: Record<string, unknown>): Promise<boolean>;
  /** The thread, created for `owner` if it did not exist. */
  ensure(threadId: string, owner: string): Promise<ThreadRow>;
  /** Sets the title unless it has one (the first user message names the thread). */
  setTitle(threadId: string, title: string): Promise<void>;
  /** Threads newest first, after the `(updated_at, thread_id)` cursor; all owners when `owner` is null. */
  list(owner: string | null, limit: number, after?: { updatedAt: number; threadId: string }): Promise<ThreadRow[]>;
  /**
   * idle → running under `runId`, held by this replica. Throws `thread_busy` or
   * `awaiting_approval` (or `thread_not_found`); of two claims arriving together exactly one wins.
   */
  claimIdle(threadId: string, runId: string): Promise<void>;
  /**
   * waiting_human → running, held by this replica, for a resume (`asRun`: it becomes the latest
   * run) or for closing an interrupt; false if another won.
   */
  claimWaiting(threadId: string, holderId: string, asRun: boolean): Promise<boolean>;
  /** running → idle | waiting_human, only by whoever holds the thread, on this replica (a survivor may have taken it over). */
  release(
    threadId: string,
    holderId: string,
    to: Exclude<ThreadStatus, "running">,
    lastOutcome: LastOutcome | null,
    openInterruptId?: string | null,
  ): Promise<boolean>;
  listRunning(): Promise<ThreadRow[]>;
}

export type InterruptStatus = "waiting_human" | "resumed" | "rejected" | "expired" | "cancelled";

/** A pending call as people are shown it (masked, with its policy), plus the hash binding approvals. */
export interface InterruptCall extends PendingCall {
  /** Hash of the full arguments; an approval is bound to it. */
  args_hash: string;
  /** Keyed hash of the full arguments, as the audit trail shows it. */
  audit_hash: string;
}

export interface InterruptRecord {
  interrupt_id: string;
  thread_id: string;
  run_id: string;
  calls: InterruptCall[];
  status: InterruptStatus;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  /** Who sent the message that led to these calls (null in records of older versions). */
  requester: string | null;
}

/** An open interrupt with the owner of its thread, for the approvals inbox. */
export interface OpenInterrupt extends InterruptRecord {
  owner: string;
}

/** Interrupt records. Transitions out of `waiting_human` are compare-and-set: one decider wins. */
export interface InterruptStore {
  create(r: Omit<InterruptRecord, "status" | "decided_at">): Promise<void>;
  get(interruptId: string): Promise<InterruptRecord | undefined>;
  /**
   * waiting_human → `to`; false when it had already left waiting_human, or (with `before`) when
   * its deadline is not after `before`: a decision cannot win against the clock.
   */
  transition(interruptId: string, to: Exclude<InterruptStatus, "waiting_human">, decisions?: unknown, before?: number): Promise<boolean>;
  /** resumed | rejected → waiting_human: a decision whose run failed on storage before anything ran. */
  reopen(interruptId: string): Promise<boolean>;
  listExpired(now: number): Promise<InterruptRecord[]>;
  /** Interrupts still open for decisions at `now`, soonest deadline first. */
  listOpen(now: number): Promise<OpenInterrupt[]>;
}

export type RunKind = "message" | "resume";

/** One logged event: its JSON `data` is kept as the exact string that went on the wire. */
export interface LoggedEvent {
  seq: number;
  type: EventType;
  data: string;
}

export interface RunRow {
  run_id: string;
  thread_id: string;
  ended_at: number | null;
  outcome: string | null;
  /** A message run's user message (`RunInput` as JSON), kept with the claim: checkpoints come only at the run's end. */
  input: string | null;
}

/**
 * Runs and their event logs (for `Last-Event-ID` replay). Every append publishes a `run_events`
 * notice with the run id on the store's bus once committed, so followers elsewhere read it.
 */
export interface RunStore {
  /** `input`: a message run's user message as JSON, written in the same commit as the claim. */
  start(runId: string, threadId: string, kind: RunKind, input?: string): Promise<void>;
  /** Closes the run's row; false when it was already closed (another settled it). */
  end(runId: string, outcome: string): Promise<boolean>;
  get(runId: string): Promise<RunRow | undefined>;
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
  decision: AuditEntry["decision"];
  /** The deciding principal; null for the system. */
  by: string | null;
  reason: string | null;
  /** The ledger's hash of the arguments the call runs with, for approved calls: joins its execution. */
  run_args_hash?: string;
  at: number;
}

/** The append-only audit trail (the database refuses updates and deletes). */
export interface AuditStore {
  /** Appends the rows; call inside the transaction that makes the decision. */
  append(records: readonly AuditRecord[]): Promise<void>;
  /** One row per pending call of `record`, all decided the same way (expiry, cancel, a voided decision). */
  appendForEachCall(record: InterruptRecord, how: Pick<AuditRecord, "decision" | "by" | "reason">, at?: number): Promise<void>;
  /** The thread's trail, oldest first, each approved call joined with what the ledger knows. */
  list(threadId: string): Promise<AuditEntry[]>;
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
export type NoticeChannel = "cancel" | "run_events";

export interface ReplicaBus {
  /** Delivered to every subscriber on every replica (this one included), at most once each. */
  publish(channel: NoticeChannel, key: string, payload?: string): Promise<void>;
  subscribe(channel: NoticeChannel, listener: (key: string, payload: string) => void): () => void;
  /** False while notices may be lost (the listening connection is down): poll meanwhile. */
  readonly connected: boolean;
}

/** The ledger as the store keeps it: claims are durable before a tool runs. */
export type LedgerStore = ExecutionLedger;

/** The stores a transaction sees. */
export interface StoreOps {
  threads: ThreadStore;
  interrupts: InterruptStore;
  runs: RunStore;
  audit: AuditStore;
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

export type { InterruptPayload };
