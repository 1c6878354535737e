import type { PastState, RunRow, ThreadRow, ThreadSnapshot } from "../../../runs/index.js";
import type { CheckpointSummary } from "../../../graph/index.js";
import { assistantIdOf } from "./assistant-id.js";
import { interruptsOf } from "./hitl-value.js";
import { type LangGraphMessage, toLangGraphMessage } from "../../../protocol/index.js";

/** A thread's status as LangGraph names it. */
export function threadStatus(t: ThreadRow): "idle" | "busy" | "interrupted" | "error" {
  if (t.status === "running") return "busy";
  if (t.status === "waiting_human") return "interrupted";
  return t.last_outcome === "error" ? "error" : "idle";
}

/** A run's status as LangGraph names it: an end at an interrupt is a success, a cancel `interrupted`. */
export function runStatus(r: RunRow): "pending" | "running" | "success" | "error" | "interrupted" {
  if (r.ended_at === null) return "running";
  if (r.outcome === "error") return "error";
  if (r.outcome === "cancelled") return "interrupted";
  return "success";
}

/** The metadata LangGraph clients search threads by, over the thread's own. */
export function threadMetadata(t: ThreadRow): Record<string, unknown> {
  let own: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(t.metadata) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) own = parsed as Record<string, unknown>;
  } catch {
    // a row without metadata reads as none
  }
  return { ...own, graph_id: t.graph_id, assistant_id: assistantIdOf(t.graph_id) };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The state's values: the messages, masked. */
export function valuesOf(s: ThreadSnapshot): { messages: LangGraphMessage[] } {
  return { messages: s.messages.map(toLangGraphMessage) };
}

/** `GET /threads/{id}`, a row of thread search. */
export function threadObject(s: ThreadSnapshot): Record<string, unknown> {
  const t = s.row;
  const interrupts = s.pending ? interruptsOf(s.pending) : [];
  return {
    thread_id: t.thread_id,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
    metadata: threadMetadata(t),
    status: threadStatus(t),
    config: {},
    values: valuesOf(s),
    interrupts: s.pending ? { [s.pending.interrupt_id]: interrupts } : {},
  };
}

/** `GET /threads/{id}/state`: the head of the thread; an open interrupt is a task that waits. */
export function threadState(s: ThreadSnapshot): Record<string, unknown> {
  const t = s.row;
  const tasks = s.pending
    ? [{ id: s.pending.interrupt_id, name: "call_tool", path: ["__pregel_pull", "call_tool"], error: null, interrupts: interruptsOf(s.pending), checkpoint: null, state: null, result: null }]
    : [];
  return {
    values: valuesOf(s),
    next: tasks.map((x) => x.name),
    tasks,
    metadata: { graph_id: t.graph_id, assistant_id: assistantIdOf(t.graph_id), thread_id: t.thread_id, ...(t.latest_run_id ? { run_id: t.latest_run_id } : {}), ...stepOf(s.checkpoint) },
    created_at: s.checkpoint?.createdAt ?? null,
    checkpoint: checkpointConfig(t.thread_id, s.checkpoint?.id),
    parent_checkpoint: checkpointConfig(t.thread_id, s.checkpoint?.parentId),
  };
}

/** An earlier state of the thread, in history: what it held and what would have run next; nothing waits in it any more. */
export function pastState(s: PastState, threadId: string): Record<string, unknown> {
  return {
    values: { messages: s.messages.map(toLangGraphMessage) },
    next: s.next,
    tasks: [],
    metadata: { thread_id: threadId, ...stepOf(s.checkpoint) },
    created_at: s.checkpoint.createdAt ?? null,
    checkpoint: checkpointConfig(threadId, s.checkpoint.id),
    parent_checkpoint: checkpointConfig(threadId, s.checkpoint.parentId),
  };
}

/** LangGraph's step of the checkpoint, as its metadata names it (Studio's timeline shows it). */
function stepOf(c: CheckpointSummary | undefined): { step?: number } {
  return c?.step === undefined ? {} : { step: c.step };
}

function checkpointConfig(threadId: string, id: string | undefined) {
  return id ? { thread_id: threadId, checkpoint_ns: "", checkpoint_id: id, checkpoint_map: null } : null;
}

/** A run as LangGraph's API shows it. */
export function runObject(r: RunRow, t: ThreadRow): Record<string, unknown> {
  const assistantId = assistantIdOf(t.graph_id);
  return {
    run_id: r.run_id,
    thread_id: r.thread_id,
    assistant_id: assistantId,
    metadata: { graph_id: t.graph_id, assistant_id: assistantId },
    status: runStatus(r),
    kwargs: {},
    multitask_strategy: "reject",
    created_at: iso(r.started_at),
    updated_at: iso(r.ended_at ?? r.started_at),
  };
}
