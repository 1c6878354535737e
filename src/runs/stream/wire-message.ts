import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { outcomeOf } from "../../graph/index.js";
import type { ThreadMessage } from "../../protocol/index.js";

/** A checkpointed message as a thread view shows it, before masking; system prompts show as nothing. */
export function toWire(m: BaseMessage): ThreadMessage[] {
  if (HumanMessage.isInstance(m)) return [{ role: "user", content: m.text }];
  if (ToolMessage.isInstance(m)) {
    // The status a `tool_result` carried, so a page can rebuild its cards after a reload.
    const { status, edited } = outcomeOf(m);
    return [
      { role: "tool", content: m.text, tool_call_id: m.tool_call_id, ...(m.name ? { name: m.name } : {}), status, ...(edited ? { edited: true } : {}) },
    ];
  }
  if (AIMessage.isInstance(m)) {
    const calls = (m.tool_calls ?? []).map((c) => ({ id: c.id!, name: c.name, args: c.args }));
    return [{ role: "assistant", content: m.text, ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  return []; // system prompts are not part of the conversation
}
