import type { BaseMessage } from "@langchain/core/messages";

/**
 * All tollgate needs of a graph's state: a `messages` channel (LangChain messages, appended by a
 * reducer such as `messagesStateReducer`). Tool calls are read from its AI messages and answered
 * with tool messages in it; anything else in the state is the graph's own.
 */
export interface MessagesState {
  messages: BaseMessage[];
}

/** The node names the kit's graphs use; the built-in agent pauses before `call_tool`. */
export const TOOLS_NODE = "tools";
export const CALL_TOOL_NODE = "call_tool";
