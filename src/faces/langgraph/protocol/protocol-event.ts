/** The thread-centric protocol's channels a stream or subscription may ask for. */
export const PROTOCOL_CHANNELS = ["lifecycle", "messages", "tools", "input", "values", "updates", "checkpoints", "tasks", "custom"] as const;
export type ProtocolChannel = (typeof PROTOCOL_CHANNELS)[number];

/** An event's method: its channel, except the input channel's two. */
export type ProtocolMethod = Exclude<ProtocolChannel, "input"> | "input.requested" | "input.answered";

/** One event of `@langchain/protocol`, as the wire carries it. */
export interface ProtocolEvent {
  type: "event";
  event_id: string;
  seq: number;
  method: ProtocolMethod;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

/**
 * Events a stream was asked for that are no longer kept (the log keeps the latest runs of a
 * thread, `EVENT_RETENTION_RUNS`): said, never skipped in silence. An error message with no
 * command id, which the SDK hands to its `onError`.
 */
export interface StreamGap {
  type: "error";
  id: null;
  error: "no_such_run";
  message: string;
  tollgate: { code: "events_pruned"; from_seq: number; to_seq: number };
}

/** What a thread's stream carries: its events, and where some are missing. */
export type StreamItem = ProtocolEvent | StreamGap;

/** What the translator makes before it is placed in the thread's order. */
export interface Emitted {
  method: ProtocolMethod;
  data: unknown;
  node?: string;
  /** The subgraph it comes from (LangGraph's `["<node>:<task id>", …]`); none: the graph itself. */
  namespace?: readonly string[];
}

/**
 * An event, or the place of one that is there only sometimes (a checkpoint, once the thread has
 * one): kept either way, so the events after it have the same seq live and in a later replay.
 */
export type Slot = Emitted | null;

/** The channel an event travels on. */
export function channelOf(method: ProtocolMethod): ProtocolChannel {
  return method === "input.requested" || method === "input.answered" ? "input" : method;
}

// `seq` places every event of a thread in one order across runs, replicas and restarts, computed
// from what is stored: the run's place on its thread, the logged event it comes from, and its
// rank among the events made from that one. The graph's own chunks after a logged event (kept in
// memory for a while, see `RecentFrames`) take the upper half of its ranks. An interrupt's later
// changes (decisions on single calls, its close) come after the run's last event. Room: 2M logged
// events a run, 512 events made from one, 512 chunks between two.
const RUN = 2 ** 32;
const PER_EVENT = 1024;
const FRAMES_FROM = 512;
const TAIL = 2 ** 31;
const CLOSE = 2 ** 30;

/** The seq of the `k`-th event made from logged event `loggedSeq` (-1: the run's start) of run `ordinal`. */
export function runSeq(o: { ordinal: number; loggedSeq: number; k: number }): number {
  return o.ordinal * RUN + (o.loggedSeq + 1) * PER_EVENT + o.k;
}

/**
 * The seq of the `n`-th chunk of the graph's stream after logged event `after` of run `ordinal`;
 * undefined past the room there is (a graph streaming over 512 chunks between two events).
 */
export function frameSeq(o: { ordinal: number; after: number; n: number }): number | undefined {
  return o.n < PER_EVENT - FRAMES_FROM ? runSeq({ ordinal: o.ordinal, loggedSeq: o.after, k: FRAMES_FROM + o.n }) : undefined;
}

/** The seq of the `k`-th event of an interrupt's change after its run: decision `progress`, or its close. */
export function tailSeq(o: { ordinal: number; progress: number | "closed"; k: number }): number {
  return o.ordinal * RUN + TAIL + (o.progress === "closed" ? CLOSE : o.progress * PER_EVENT) + o.k;
}

/** The last seq a run of this ordinal could have. */
export function lastSeqOf(ordinal: number): number {
  return (ordinal + 1) * RUN - 1;
}

/** The run a seq belongs to. */
export function ordinalOf(seq: number): number {
  return Math.floor(seq / RUN);
}
