import type { ToolMessage } from "@langchain/core/messages";
import { answerFromLedger } from "../../graphs/answer-from-ledger.js";
import type { ExecutionLedger } from "../ledger/index.js";
import type { AgentGraph } from "../../graphs/agent.js";
import { outcomeMessage, unansweredCalls } from "../../graphs/tool-messages.js";
import type { AgentStateType } from "../../graphs/state.js";
import type { ToolOutcome } from "../tools/index.js";
import { holdsInput, inputMessage, type RunInput } from "./run-input.js";

/**
 * Answers every call the thread's last assistant message left open, so the history stays valid
 * for the next model call, and ends the graph there (`closed`). Works from what the next run will
 * load. What the ledger knows wins over `fallback`: a call that ran keeps its result, one caught
 * mid-run is "outcome unknown". `input`: the user's message of the message run being closed; put
 * at the end of the history if the graph never saved it (the run died or stopped before its end
 * was saved), so the next model call sees the question that went unanswered.
 */
export async function closePendingCalls(
  graph: AgentGraph,
  ledger: ExecutionLedger,
  threadId: string,
  fallback: ToolOutcome,
  input?: RunInput,
): Promise<ToolMessage[]> {
  const config = { configurable: { thread_id: threadId } };
  const state = await graph.getState(config);
  const values = state.values as Partial<AgentStateType>;
  const calls = unansweredCalls(values.messages ?? []);
  // A step whose task finished but whose checkpoint never came (a kill, a refused write) left its
  // output as pending writes, which a new run would start without: `getState` shows them, and
  // `updateState` commits them along with the answers, so the history keeps what really ran.
  const uncommitted = state.tasks.some((t) => t.result !== undefined);
  const lostInput = input && !holdsInput(values.messages, input) ? [inputMessage(input)] : [];
  if (calls.length === 0 && !uncommitted && lostInput.length === 0) return [];
  const answer = answerFromLedger(ledger, threadId, fallback);
  const messages: ToolMessage[] = [];
  for (const call of calls) messages.push(outcomeMessage(call, await answer(call)));
  // As if the tools node had answered them; its router ends the graph when `closed` is set.
  await graph.updateState(config, { messages: [...messages, ...lostInput], closed: true }, "tools");
  return messages;
}
