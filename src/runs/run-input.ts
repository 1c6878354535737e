import { HumanMessage } from "@langchain/core/messages";
import type { AgentGraph } from "../../graphs/agent.js";
import type { AgentStateType } from "../../graphs/state.js";
import type { RunRow } from "../store/index.js";

/**
 * A message run's user message, as its run row keeps it. The graph saves its checkpoints only
 * when a run ends (`durability: "exit"`: no checkpoint write stands between the user's message and
 * the model request), so the run row, written in the claim's commit, is what makes the message
 * durable before the model is called. A run that never reaches its end (kill -9, a replica cut
 * off) has its message put back into the history by whoever settles it.
 */
export interface RunInput {
  id: string;
  content: string;
}

export const encodeRunInput = (input: RunInput): string => JSON.stringify(input);

export function runInputOf(row: Pick<RunRow, "input"> | undefined): RunInput | undefined {
  if (!row?.input) return undefined;
  const v = JSON.parse(row.input) as Partial<RunInput>;
  return typeof v.id === "string" && typeof v.content === "string" ? { id: v.id, content: v.content } : undefined;
}

export const inputMessage = (input: RunInput): HumanMessage => new HumanMessage({ id: input.id, content: input.content });

/** Whether the messages hold the run's user message (by id: a history repair may move it). */
export function holdsInput(messages: readonly { id?: string }[] | undefined, input: RunInput): boolean {
  return (messages ?? []).some((m) => m.id === input.id);
}

/**
 * Puts the run's user message at the end of the thread's history if the checkpoint lacks it (the
 * run died before its end was saved), so the next run's model sees the question that went
 * unanswered. Ends the graph there, as the closers do. Returns whether it wrote.
 */
export async function restoreRunInput(graph: AgentGraph, threadId: string, input: RunInput): Promise<boolean> {
  const config = { configurable: { thread_id: threadId } };
  const state = await graph.getState(config);
  if (holdsInput((state.values as Partial<AgentStateType>).messages, input)) return false;
  await graph.updateState(config, { messages: [inputMessage(input)], closed: true }, "tools");
  return true;
}
