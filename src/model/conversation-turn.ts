import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";

/** Where a conversation stands, as a scripted model reads it from the messages it is sent. */
export interface ConversationTurn {
  /** The latest user message, as text ("" before there is one). */
  request: string;
  /** The tool messages since that message, oldest first. */
  toolResults: ToolMessage[];
  /** How many times the model has answered since that message (0 on the first call of the turn). */
  answered: number;
}

/**
 * The latest user request and what followed it. Read from the messages alone, so a scripted model
 * answers the same after a restart as before it.
 */
export function latestTurn(messages: readonly BaseMessage[]): ConversationTurn {
  let i = messages.length - 1;
  while (i >= 0 && !HumanMessage.isInstance(messages[i])) i--;
  const since = messages.slice(i + 1);
  return {
    request: i >= 0 ? messages[i]!.text : "",
    toolResults: since.filter((m) => ToolMessage.isInstance(m)),
    answered: since.filter((m) => AIMessage.isInstance(m)).length,
  };
}
