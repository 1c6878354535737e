import type { ToolMessage } from "@langchain/core/messages";
import type { ExecutionLedger } from "../ledger/index.js";
import type { ToolOutcome } from "../tools/index.js";
import { answerFromLedger } from "./answer-from-ledger.js";
import { messagesOf, pausedMessages } from "./paused-messages.js";
import { holdsInput, inputMessage, type RunInput } from "./run-input.js";
import type { ServedGraph } from "./served-graph.js";
import { outcomeMessage, unansweredCalls } from "./tool-messages.js";

/** What closing a thread's open calls needs besides its graph. */
export interface PendingCallsClosing {
  /** What it knows wins over `fallback`: a call that ran keeps its result, one caught mid-run is "outcome unknown". */
  ledger: ExecutionLedger;
  threadId: string;
  /** The answer for a call the ledger never saw run. */
  fallback: ToolOutcome;
  /**
   * The user's message of the message run being closed; put at the end of the history if the
   * graph never saved it (the run died or stopped before its end was saved), so the next model
   * call sees the question that went unanswered.
   */
  input?: RunInput;
}

/**
 * Answers every call the thread's last assistant message left open (in the graph, or in the
 * subgraph it paused in), so the history stays valid for the next model call, and ends the graph
 * there: the built-in agent's `closed`, or pending tasks cleared.
 * Works from what the next run will load.
 */
export async function closePendingCalls(served: ServedGraph, o: PendingCallsClosing): Promise<ToolMessage[]> {
  const { ledger, threadId, fallback, input } = o;
  const { graph } = served;
  const config = { configurable: { thread_id: threadId } };
  let state = await graph.getState(config, { subgraphs: true });
  // A fork that never saved: its message belongs after the checkpoint it started from, not the head.
  const at = input?.from && !holdsInput(messagesOf(state), input) ? { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: input.from } } : config;
  if (at !== config) state = await graph.getState(at, { subgraphs: true });
  const top = messagesOf(state);
  // Calls left open in a subgraph (a gate one level down) are answered in the graph itself, with
  // the subgraph's messages that asked for them: as if the subgraph's node had returned there.
  const { all, carried } = pausedMessages(state);
  const calls = unansweredCalls(all);
  // A step whose task finished but whose checkpoint never came (a kill, a refused write) left its
  // output as pending writes, which a new run would start without: `getState` shows them, and
  // `updateState` commits them along with the answers, so the history keeps what really ran.
  const uncommitted = state.tasks.some((t) => t.result !== undefined);
  const lostInput = input && !holdsInput(top, input) ? [inputMessage(input)] : [];
  if (calls.length === 0 && !uncommitted && lostInput.length === 0) return [];
  const answer = answerFromLedger(ledger, threadId, fallback);
  const messages: ToolMessage[] = [];
  for (const call of calls) messages.push(outcomeMessage(call, await answer(call)));
  // As if the node the graph paused in had answered them; then nothing runs on from there.
  const pausedIn = state.tasks.find((t) => t.result === undefined)?.name;
  const write = served.closeWrite([...carried, ...messages, ...lostInput], pausedIn);
  await graph.updateState(at, write.values, write.asNode);
  if (write.clear) await graph.updateState(config, null, "__end__");
  return messages;
}

