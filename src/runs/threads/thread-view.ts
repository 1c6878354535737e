import type { BaseMessage } from "@langchain/core/messages";
import { type CheckpointSummary, checkpointOf, holdsInput, inputMessage, pausedMessages, runInputOf } from "../../graph/index.js";
import { AppError, type InterruptPayload, threadNotFound, type ThreadMessage, type ThreadView } from "../../protocol/index.js";
import { toWire } from "../stream/wire-message.js";
import type { ThreadRow } from "../../store/index.js";
import { interruptPayload } from "../decide/interrupt-payload.js";
import type { RunContext } from "../run-context.js";

/** A thread as both APIs show it: its row, its messages (masked, with their ids), its open interrupt. */
export interface ThreadSnapshot {
  row: ThreadRow;
  messages: Array<ThreadMessage & { id: string | undefined }>;
  pending: InterruptPayload | null;
  /** The checkpoint the messages come from; undefined before the thread's first. */
  checkpoint: CheckpointSummary | undefined;
}

/** `GET /threads/:id`: status from the thread record, messages from the checkpoint, never from memory. */
export async function readThreadView(ctx: Pick<RunContext, "graphs" | "redactor" | "store">, threadId: string): Promise<ThreadView> {
  const { row: t, messages, pending } = await readThreadSnapshot(ctx, threadId);
  return {
    thread_id: t.thread_id,
    graph_id: t.graph_id,
    status: t.status,
    last_outcome: t.last_outcome,
    owner: t.owner,
    messages: messages.map(({ id: _id, ...m }) => m),
    pending,
  };
}

/** The thread's row, checkpointed messages and open interrupt, masked and scrubbed on their way out. */
export async function readThreadSnapshot(ctx: Pick<RunContext, "graphs" | "redactor" | "store">, threadId: string): Promise<ThreadSnapshot> {
  const t = await ctx.store.threads.get(threadId);
  if (!t) throw threadNotFound(threadId);
  const state = await ctx.graphs.forThread(t.graph_id).graph.getState({ configurable: { thread_id: threadId } }, { subgraphs: true });
  // With a subgraph's messages while the graph waits in it: the calls it waits on, what ran before them.
  const stored = pausedMessages(state).all;
  // A run in flight has its checkpoint saved only at its end: its user message is in its run row.
  const input = t.status === "running" && t.latest_run_id ? runInputOf(await ctx.store.runs.get(t.latest_run_id)) : undefined;
  const history = input && !holdsInput(stored, input) ? [...stored, inputMessage(input)] : stored;
  // Real values in the checkpoint; masked and scrubbed on their way out.
  const messages = shownMessages(ctx, history);
  const open = t.status === "waiting_human" && t.open_interrupt_id ? await ctx.store.interrupts.get(t.open_interrupt_id) : undefined;
  return {
    row: t,
    messages,
    pending: open ? ctx.redactor.interrupt(interruptPayload(open)) : null,
    checkpoint: checkpointOf(state),
  };
}

/** An earlier state of a thread: its messages (masked, with their ids), its checkpoint, what would run next. */
export interface PastState {
  messages: ThreadSnapshot["messages"];
  checkpoint: NonNullable<ThreadSnapshot["checkpoint"]>;
  next: string[];
}

/** The thread's checkpoints before `before` (a checkpoint id), newest first, masked like its head. */
export async function readThreadHistory(ctx: RunContext, t: ThreadRow, o: { limit: number; before: string }): Promise<PastState[]> {
  const graph = ctx.graphs.forThread(t.graph_id).graph;
  const past: PastState[] = [];
  const before = { configurable: { thread_id: t.thread_id, checkpoint_ns: "", checkpoint_id: o.before } };
  for await (const state of graph.getStateHistory({ configurable: { thread_id: t.thread_id, checkpoint_ns: "" } }, { limit: o.limit, before })) {
    const checkpoint = checkpointOf(state);
    if (!checkpoint) continue;
    past.push({ messages: shownMessages(ctx, pausedMessages(state).all), checkpoint, next: [...state.next] });
  }
  return past;
}

/** The thread at checkpoint `checkpointId`, masked like its head; undefined when the thread has no such checkpoint. */
export async function readThreadStateAt(ctx: RunContext, t: ThreadRow, checkpointId: string): Promise<PastState | undefined> {
  const graph = ctx.graphs.forThread(t.graph_id).graph;
  const state = await graph.getState({ configurable: { thread_id: t.thread_id, checkpoint_ns: "", checkpoint_id: checkpointId } }, { subgraphs: true });
  const checkpoint = checkpointOf(state);
  // A checkpoint the thread does not have reads as an empty state, with no time of its own.
  if (state.createdAt === undefined || checkpoint?.id !== checkpointId) return undefined;
  return { messages: shownMessages(ctx, pausedMessages(state).all), checkpoint, next: [...state.next] };
}

/** Checkpointed messages as people see them: masked and scrubbed, each with its id. */
function shownMessages(ctx: Pick<RunContext, "redactor">, messages: readonly BaseMessage[]): ThreadSnapshot["messages"] {
  return messages.flatMap((m) => toWire(m).map((w) => ({ ...ctx.redactor.message(w), id: m.id })));
}
