import type { ThreadMessage } from "./resources.js";

/** A message as LangGraph's API serializes it in state, history and stream events. */
export type LangGraphMessage = Record<string, unknown> & { type: string; content: string; id?: string };

/**
 * A thread's message (already masked and scrubbed) in LangChain's serialized shape. Tool statuses
 * other than `ok` are `error` there, as LangChain's `ToolMessage.status` knows only those two.
 */
export function toLangGraphMessage(m: ThreadMessage & { id?: string | undefined }): LangGraphMessage {
  const id = m.id ? { id: m.id } : {};
  switch (m.role) {
    case "user":
      return { type: "human", content: m.content, ...id, additional_kwargs: {}, response_metadata: {} };
    case "assistant":
      return {
        type: "ai",
        content: m.content,
        ...id,
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.args, type: "tool_call" })),
        invalid_tool_calls: [],
        additional_kwargs: {},
        response_metadata: {},
      };
    case "tool":
      return {
        type: "tool",
        content: m.content,
        ...id,
        tool_call_id: m.tool_call_id ?? "",
        ...(m.name ? { name: m.name } : {}),
        status: (m.status ?? "ok") === "ok" ? "success" : "error",
        additional_kwargs: {},
        response_metadata: {},
      };
  }
}
