import { HumanMessage } from "@langchain/core/messages";
import type { RunRow } from "../store/index.js";

/**
 * A message run's user message, as its run row keeps it. The graph saves its checkpoints only
 * when a run ends (`durability: "exit"`: no checkpoint write stands between the user's message and
 * the model request), so the run row, written in the claim's commit, is what makes the message
 * durable before the model is called. A run that never reaches its end (kill -9, a replica cut
 * off) has its message put back into the history by whoever closes it (`closePendingCalls`).
 */
export interface RunInput {
  id: string;
  content: string;
  /** The earlier checkpoint the run starts from (a fork); absent: the thread's head. */
  from?: string;
  /**
   * The id the client gave its message, when it gave one: LangGraph's thread-centric clients
   * match the message they sent by it. Shown by that face only; the history keeps `id`.
   */
  clientId?: string;
}

export const encodeRunInput = (input: RunInput): string => JSON.stringify(input);

export function runInputOf(row: Pick<RunRow, "input"> | undefined): RunInput | undefined {
  if (!row?.input) return undefined;
  const v = JSON.parse(row.input) as Partial<RunInput>;
  if (typeof v.id !== "string" || typeof v.content !== "string") return undefined;
  return { id: v.id, content: v.content, ...(typeof v.from === "string" ? { from: v.from } : {}), ...(typeof v.clientId === "string" ? { clientId: v.clientId } : {}) };
}

export const inputMessage = (input: RunInput): HumanMessage => new HumanMessage({ id: input.id, content: input.content });

/** Whether the messages hold the run's user message (by id: a history repair may move it). */
export function holdsInput(messages: readonly { id?: string }[] | undefined, input: RunInput): boolean {
  return (messages ?? []).some((m) => m.id === input.id);
}
