import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { Overwrite } from "@langchain/langgraph";
import { closingOutcomes, MALFORMED_CALL_NAME, outcomeMessage, type ToolOutcome } from "../src/tools/index.js";

/**
 * What a valid Chat Completions history is, and the one place that makes a thread's history
 * valid again. The rules (OpenAI rejects a request that breaks any of them, and so do most
 * compatible servers):
 * - every assistant tool call has an id, unique in its message, and a name matching
 *   `^[a-zA-Z0-9_-]{1,64}$`;
 * - the tool messages right after an assistant message answer each of its calls once, before
 *   any other message;
 * - a tool message answers a call of the assistant message right before it.
 */

/** Tool names the Chat Completions API accepts. */
export const VALID_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A fresh tool call id, for calls that came without one or with one already used. */
export const freshCallId = () => `call_${randomUUID().replace(/-/g, "")}`;

/** How to answer a call that later messages left behind unanswered. */
export type AnswerLeftBehind = (call: ToolCall) => ToolOutcome;

/**
 * The history as Chat Completions accepts it, or `undefined` when it already is. Calls left
 * unanswered (by a crash, by a new message sent while they waited, by an older tollgate) get a
 * tool message from `answer`, placed right after their siblings' answers; tool messages that
 * answer nothing are dropped; malformed calls are renamed. Every call is closed, including the
 * last message's: this runs right before a model call, when nothing else will answer them.
 */
export function repairHistory(messages: readonly BaseMessage[], answer: AnswerLeftBehind): BaseMessage[] | undefined {
  const out: BaseMessage[] = [];
  let changed = false;
  let open = new Map<string, ToolCall>();
  const closeOpen = () => {
    for (const call of open.values()) {
      out.push(outcomeMessage(call, call.name === MALFORMED_CALL_NAME ? closingOutcomes.malformed() : answer(call)));
    }
    if (open.size) changed = true;
    open = new Map();
  };
  for (const m of messages) {
    if (ToolMessage.isInstance(m)) {
      if (open.delete(m.tool_call_id)) out.push(m);
      else changed = true; // answers no open call: an orphan or a second answer
      continue;
    }
    closeOpen();
    if (AIMessage.isInstance(m)) {
      const valid = withValidCalls(m);
      if (valid !== m) changed = true;
      out.push(valid);
      open = new Map((valid.tool_calls ?? []).map((c) => [c.id!, c]));
    } else {
      out.push(m);
    }
  }
  closeOpen();
  return changed ? out : undefined;
}

/**
 * The state update that stores a repaired history with the model's `answer` after it. An
 * `Overwrite` makes LangGraph snapshot the whole list at this checkpoint, so later reads start
 * from the repaired copy instead of replaying the broken writes before it. Rare: only a broken
 * thread needs it.
 */
export function replaceHistory(repaired: readonly BaseMessage[], answer: BaseMessage): Overwrite<BaseMessage[]> {
  return new Overwrite([...repaired, answer]);
}

/** The message itself when its calls are valid, else a copy (same id) with them made valid. */
function withValidCalls(ai: AIMessage): AIMessage {
  const seen = new Set<string>();
  const calls: ToolCall[] = [];
  let changed = false;
  for (const c of ai.tool_calls ?? []) {
    if (c.id && seen.has(c.id)) {
      changed = true; // a second call under one id could never be answered on its own
      continue;
    }
    const id = c.id || freshCallId();
    seen.add(id);
    if (VALID_TOOL_NAME.test(c.name)) {
      calls.push(id === c.id ? c : { ...c, id });
      if (id !== c.id) changed = true;
    } else {
      calls.push({ id, name: MALFORMED_CALL_NAME, args: {}, type: "tool_call" });
      changed = true;
    }
  }
  // Without parsed calls, LangChain would send these raw, whatever they hold.
  const { tool_calls: raw, ...kwargs } = ai.additional_kwargs;
  if (raw !== undefined && !ai.tool_calls?.length) changed = true;
  if (!changed) return ai;
  return new AIMessage({
    id: ai.id,
    content: ai.content,
    tool_calls: calls,
    additional_kwargs: kwargs,
    response_metadata: ai.response_metadata,
    usage_metadata: ai.usage_metadata,
  });
}

/**
 * `repairHistory` with answers read from the ledger. The first pass only finds which calls need
 * an answer (nearly always none: no read at all); the second answers them.
 */
export async function repairWithLedger(
  messages: readonly BaseMessage[],
  answer: (call: ToolCall) => Promise<ToolOutcome>,
): Promise<BaseMessage[] | undefined> {
  const asked: ToolCall[] = [];
  const placeholder: ToolOutcome = { status: "error", error: "" };
  if (!repairHistory(messages, (call) => (asked.push(call), placeholder))) return undefined;
  const known = new Map<string | undefined, ToolOutcome>();
  for (const call of asked) known.set(call.id, await answer(call));
  return repairHistory(messages, (call) => known.get(call.id) ?? placeholder);
}
