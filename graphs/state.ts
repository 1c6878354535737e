import { Annotation, MessagesAnnotation } from "@langchain/langgraph";

/**
 * The graph's state. `rounds` counts model calls in the current run (a new message or a resume
 * starts at 0); `closed` is set when the server closes pending calls itself (cancel, expiry,
 * restart), so the graph ends instead of asking the model again.
 */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  rounds: Annotation<number>({ reducer: (_prev, next) => next, default: () => 0 }),
  closed: Annotation<boolean>({ reducer: (_prev, next) => next, default: () => false }),
});

export type AgentStateType = typeof AgentState.State;
export type AgentUpdate = typeof AgentState.Update;
