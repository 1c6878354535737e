import { ToolMessage } from "@langchain/core/messages";
import { pausedMessages } from "./paused-messages.js";
import type { ServedGraph } from "./served-graph.js";
import { unansweredCalls } from "./tool-messages.js";

/** An earlier checkpoint of a thread that a new run may start from (LangGraph's fork): the calls answered in it. */
export interface ForkPoint {
  checkpointId: string;
  answered: ReadonlySet<string>;
}

/**
 * Checkpoint `checkpointId` of the thread as a place to start a run from: `unknown` when the thread
 * has no such checkpoint, `open_calls` when the graph waited on tool calls there (their decisions
 * belong to the run that went on from it).
 */
export async function readForkPoint(served: ServedGraph, threadId: string, checkpointId: string): Promise<ForkPoint | "unknown" | "open_calls"> {
  const state = await served.graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId } }, { subgraphs: true });
  // A checkpoint the thread does not have reads as an empty state, with no time of its own.
  if (state.createdAt === undefined || (state.config?.configurable as { checkpoint_id?: string } | undefined)?.checkpoint_id !== checkpointId) return "unknown";
  const { all } = pausedMessages(state);
  if (unansweredCalls(all).length > 0) return "open_calls";
  return { checkpointId, answered: new Set(all.filter((m) => ToolMessage.isInstance(m)).map((m) => m.tool_call_id)) };
}
