import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";
import type { MessagesState } from "./graph-state.js";

/** The messages of a snapshot's state. */
export const messagesOf = (s: StateSnapshot): BaseMessage[] => (s.values as Partial<MessagesState>).messages ?? [];

/**
 * The thread's messages as people and the engine see them (a snapshot read with
 * `{ subgraphs: true }`): the graph's own, then those of the subgraph it is paused in (a gate one
 * level down) that the graph does not hold yet, since a subgraph's output reaches its parent only
 * when it returns. `carried` are those; `paused` is the subgraph's state (or the graph's own).
 */
export function pausedMessages(snapshot: StateSnapshot): { all: BaseMessage[]; carried: BaseMessage[]; paused: StateSnapshot } {
  const top = messagesOf(snapshot);
  const paused = deepestPaused(snapshot) ?? snapshot;
  if (paused === snapshot) return { all: top, carried: [], paused };
  const known = new Set(top.map((m) => m.id));
  const carried = messagesOf(paused).filter((m) => !m.id || !known.has(m.id));
  return { all: [...top, ...carried], carried, paused };
}

/** The deepest state of a subgraph whose task has not finished. */
function deepestPaused(s: StateSnapshot): StateSnapshot | undefined {
  for (const t of s.tasks) {
    if (t.result !== undefined) continue;
    const sub = subgraphState(t);
    if (sub) return deepestPaused(sub) ?? sub;
  }
  return undefined;
}

/** A task's subgraph state, when the snapshot was read with `{ subgraphs: true }` and the task runs one. */
export function subgraphState(task: StateSnapshot["tasks"][number]): StateSnapshot | undefined {
  const sub = task.state as StateSnapshot | undefined;
  return sub && typeof sub === "object" && "values" in sub ? sub : undefined;
}
