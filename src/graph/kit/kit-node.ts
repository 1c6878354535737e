import type { ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { MessagesState } from "../graph-state.js";

/**
 * A kit node as a graph adds it. Named so the published types import ToolMessage from
 * `@langchain/core`, which every team has, and not from a package that re-exports it.
 */
export type KitNode = (state: MessagesState, config: LangGraphRunnableConfig) => Promise<{ messages: ToolMessage[] }>;
