import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";

export { closingOutcomes, outcomeMessage, outcomeOf, type ToolArtifact } from "../tools/index.js";

/** Calls whose arguments were not valid JSON; they are answered `invalid_args` without running. */
export const UNPARSABLE_KEY = "tollgate_unparsable_args";

export function lastAssistant(messages: BaseMessage[]): AIMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (AIMessage.isInstance(m)) return m;
    if (!ToolMessage.isInstance(m)) return undefined;
  }
  return undefined;
}

/** The last assistant message's calls that no ToolMessage has answered yet. */
export function unansweredCalls(messages: BaseMessage[]): ToolCall[] {
  const ai = lastAssistant(messages);
  if (!ai?.tool_calls?.length) return [];
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0 && messages[i] !== ai; i--) {
    const m = messages[i]!;
    if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
  }
  return ai.tool_calls.filter((c) => !answered.has(c.id!));
}

export function unparsableError(ai: AIMessage | undefined, callId: string): string | undefined {
  const map = ai?.additional_kwargs?.[UNPARSABLE_KEY] as Record<string, string> | undefined;
  return map?.[callId];
}

