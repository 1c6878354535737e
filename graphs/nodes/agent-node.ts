import { randomUUID } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type AIMessageChunk, type BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { LinkedAbortController } from "../../src/lib/index.js";
import { describeModelFailure, ModelCallError } from "../../src/model/model-call-error.js";
import { MALFORMED_CALL_NAME, type ToolRegistry } from "../../src/tools/index.js";
import type { ExecutionLedger } from "../../src/ledger/index.js";
import { answerFromLedger, closingOutcomes, type TokenChunk, UNPARSABLE_KEY } from "../../src/graph/index.js";
import { freshCallId, repairWithLedger, replaceHistory, VALID_TOOL_NAME } from "../history.js";
import type { AgentStateType, AgentUpdate } from "../state.js";
import { ChunkAccumulator } from "./chunk-accumulator.js";
import { type ModelTimeouts, ModelDeadline } from "./model-deadline.js";
import { StreamTurns } from "./turn-budget.js";

/**
 * Calls the model once, writing its text to the stream writer as it arrives (the lean path: no
 * per-token message snapshots), and returns the whole assistant message. The history it sends
 * is valid Chat Completions: a thread broken by a crash, a new message sent while calls waited,
 * or an older version is repaired first (`repairHistory`), and the repair is stored with the answer.
 */
export function createAgentNode(opts: {
  model: BaseChatModel;
  registry: ToolRegistry;
  ledger: ExecutionLedger;
  systemPrompt: string | undefined;
  timeouts: ModelTimeouts;
}) {
  const { model, registry, ledger, systemPrompt, timeouts } = opts;
  const tools = registry.langchainTools();
  const bound = tools.length && model.bindTools ? model.bindTools(tools) : model;
  // Chat Completions servers end every complete answer with a finish_reason; other model
  // classes report completion in their own ways, so only this protocol is checked.
  const checksFinish = model._llmType() === "openai";
  return async function agent(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentUpdate> {
    const threadId = (config.configurable?.thread_id as string | undefined) ?? "local";
    const repaired = await repairWithLedger(state.messages, answerFromLedger(ledger, threadId, closingOutcomes.superseded()));
    const history = repaired ?? state.messages;
    const input: BaseMessage[] = systemPrompt ? [new SystemMessage(systemPrompt), ...history] : history;
    const acc = new ChunkAccumulator();
    let full: AIMessageChunk | undefined;
    const write = config.writer;
    const deadline = new ModelDeadline(timeouts);
    const turns = new StreamTurns();
    // Either a cancel or the deadline aborts the request, and with it the socket.
    const link = new LinkedAbortController([config.signal, deadline.signal]);
    const signal = link.signal;
    try {
      // The model's own iterator, not `stream()`: that wraps it in a web ReadableStream, a hop
      // per token (and an error built per call, when it enqueues after closing) that cost a fifth
      // of the throughput at 200 streams. Callbacks (tracing, LangGraph's messages mode) stay.
      for await (const chunk of bound._streamIterator(input, { ...config, signal })) {
        deadline.observe(chunk);
        const text = acc.add(chunk);
        if (text) write?.({ token: text } satisfies TokenChunk);
        const pause = turns.next(); // a burst from the model must not hold everyone else up
        if (pause) await pause;
      }
      full = acc.result();
      // ChatOpenAI ends its stream quietly on abort: a half answer must not pass as a whole one.
      config.signal?.throwIfAborted();
      // A deadline that passed after the model had finished (finish_reason came) took nothing away.
      if (deadline.expired && !full?.response_metadata?.finish_reason) deadline.signal.throwIfAborted();
      if (checksFinish && !full?.response_metadata?.finish_reason) {
        throw new ModelCallError("Model call failed: the stream ended before the model finished its answer");
      }
    } catch (err) {
      // A cancel wins over everything, the deadline over whatever the abort looked like upstream.
      if (config.signal?.aborted) throw config.signal.reason ?? err;
      if (deadline.expired) throw new ModelCallError(deadline.describe(), { cause: err }, "model_timeout");
      if (err instanceof ModelCallError) throw err;
      throw new ModelCallError(describeModelFailure(err), { cause: err });
    } finally {
      deadline.stop();
      link.unlink();
    }
    const answer = finalMessage(full, usedCallIds(history));
    return { messages: repaired ? replaceHistory(repaired, answer) : [answer], rounds: state.rounds + 1 };
  };
}

/**
 * A plain AIMessage from the streamed chunks, under an id of tollgate's own: some compatible
 * servers reuse completion ids, and the message reducer would then overwrite an earlier answer.
 * Calls whose arguments did not parse are kept as calls (so the model gets an answer for each id
 * it sent) and flagged to be answered `invalid_args`; calls without a valid name are renamed
 * `invalid_tool_call` and answered "malformed tool call".
 */
export function finalMessage(full: AIMessageChunk | undefined, used: Set<string> = new Set()): AIMessage {
  if (!full) return new AIMessage({ id: randomUUID(), content: "" });
  const calls: ToolCall[] = [];
  const unparsable: Record<string, string> = {};
  // Call ids key the ledger and the idempotency key: some servers number calls per response
  // (call_0, call_1…), so an id seen before in the thread, or twice in one batch, is replaced.
  const freshId = (id: string | undefined) => {
    const unique = id && !used.has(id) ? id : freshCallId();
    used.add(unique);
    return unique;
  };
  const named = (name: string | undefined) => (name && VALID_TOOL_NAME.test(name) ? name : undefined);
  for (const c of full.tool_calls ?? []) {
    const id = freshId(c.id);
    const name = named(c.name);
    const args = normalizeArgs(c.args);
    if (!name) calls.push({ id, name: MALFORMED_CALL_NAME, args: {}, type: "tool_call" });
    else if (args) calls.push({ ...c, id, name, args });
    else {
      calls.push({ ...c, id, name, args: {} });
      unparsable[id] = "arguments must be a JSON object";
    }
  }
  for (const bad of full.invalid_tool_calls ?? []) {
    const id = freshId(bad.id);
    const name = named(bad.name);
    calls.push({ id, name: name ?? MALFORMED_CALL_NAME, args: {}, type: "tool_call" });
    // Not echoed: the broken text may hold a sensitive value, and the error is shown to people too.
    if (name) unparsable[id] = `arguments are not valid JSON (${(bad.args ?? "").length} characters received)`;
  }
  return new AIMessage({
    id: randomUUID(),
    content: full.content,
    tool_calls: calls,
    additional_kwargs: Object.keys(unparsable).length ? { [UNPARSABLE_KEY]: unparsable } : {},
    response_metadata: full.response_metadata,
    usage_metadata: full.usage_metadata,
  });
}

/** Every tool call id the thread's assistant messages have used. */
function usedCallIds(messages: BaseMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) ids.add(c.id);
  }
  return ids;
}

/** Some servers double-encode arguments as a JSON string; unwrap that, refuse anything else. */
function normalizeArgs(args: unknown): Record<string, unknown> | null {
  if (typeof args === "string") {
    try {
      return normalizeArgs(JSON.parse(args));
    } catch {
      return null;
    }
  }
  return args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : null;
}
