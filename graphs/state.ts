import type { BaseMessage } from "@langchain/core/messages";
import { Annotation, DeltaChannel, type Messages, messagesDeltaReducer } from "@langchain/langgraph";

/**
 * Messages are a DeltaChannel: each checkpoint stores only the step's new messages (plus a full
 * snapshot every `MESSAGE_SNAPSHOT_EVERY` updates) instead of the whole history, so a step costs
 * about the same at turn 500 as at turn 10. With the default list channel every step rewrote the
 * entire history (measured: 13 KiB per step at turn 10, 651 KiB at turn 500). Snapshots are rare
 * (LangGraph also forces one every 5000 steps) because reading the channel back is one query
 * however far the last one is (TollgateSaver): with one every 1000 updates, the bytes per step
 * at turn 500 were 7.6× those at turn 10; with this, flat.
 */
export const MESSAGE_SNAPSHOT_EVERY = 10_000;

/**
 * The graph's state. `rounds` counts model calls in the current run (a new message or a resume
 * starts at 0); `closed` is set when the server closes pending calls itself (cancel, expiry,
 * restart), so the graph ends instead of asking the model again.
 */
export const AgentState = Annotation.Root({
  messages: new DeltaChannel<BaseMessage[], Messages>(messagesDeltaReducer, { snapshotFrequency: MESSAGE_SNAPSHOT_EVERY }),
  rounds: Annotation<number>({ reducer: (_prev, next) => next, default: () => 0 }),
  closed: Annotation<boolean>({ reducer: (_prev, next) => next, default: () => false }),
});

export type AgentStateType = typeof AgentState.State;
export type AgentUpdate = typeof AgentState.Update;
