import { randomUUID } from "node:crypto";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput, ToolDefinition } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BaseChatModelParams,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { abortableSleep } from "../lib/index.js";
import { latestTurn } from "./conversation-turn.js";

/** A tool call a scripted answer makes. Without `id`, one is made up (`call_…`). */
export interface ScriptedToolCall {
  name: string;
  args: Record<string, unknown>;
  id?: string;
}

/** One model answer: `text` streamed word by word, then `toolCalls`. A string is just text. */
export type ScriptedReply = string | { text?: string; toolCalls?: ScriptedToolCall[] };

/** What a rule answers from: the user's request, what the tools said since, the whole conversation. */
export interface ScriptedTurn {
  /** `when` run on `request`; a function `when` gives the whole request as `match[0]`. */
  match: RegExpExecArray;
  /** The latest user message, as text. */
  request: string;
  /**
   * The tool messages since that message, oldest first (`[]` on the first call of the turn), as
   * the model reads them: a refused call's content is `Rejected: <reason>`, an approved call's is
   * the tool's output, after a line `Approved with edits: <keys>` when a person edited it.
   */
  toolResults: ToolMessage[];
  /** Every message the model was sent, the system prompt first. */
  messages: BaseMessage[];
}

/** An answer, or how to make one from the turn. */
export type ScriptedAnswer = ScriptedReply | ((turn: ScriptedTurn) => ScriptedReply | Promise<ScriptedReply>);

/** How the model answers the user messages `when` matches. */
export interface ScriptedRule {
  /** Which user messages this rule answers. Rules are tried in order; the first that matches answers. */
  when: RegExp | ((request: string) => boolean);
  /** The answer to the user's message (the first model call of its turn). */
  reply: ScriptedAnswer;
  /**
   * The answer once tools have answered (every later model call of the turn): the final text, or
   * more tool calls. Needed by a rule whose reply calls tools.
   */
  then?: ScriptedAnswer;
}

export interface ScriptedChatModelParams extends BaseChatModelParams {
  rules: ScriptedRule[];
  /** How to answer a user message no rule matches. Without it such a call fails, naming the message. */
  fallback?: Omit<ScriptedRule, "when">;
  /** Pause between streamed pieces, in ms (default 0). A cancel lands in it. */
  tokenDelayMs?: number;
}

export interface ScriptedChatModelCallOptions extends BaseChatModelCallOptions {
  /** Set by `bindTools`: the tools the model may call, in OpenAI's format. */
  tools?: ToolDefinition[];
}

/**
 * A chat model that answers by rules instead of by a provider, for testing tools and graphs
 * without a key or a network. A rule turns a user message into text or tool calls (`reply`) and
 * the tools' results into the next answer (`then`). It works out where the conversation stands
 * from the messages it is sent, so it answers the same after a restart or a resume.
 *
 * Like a provider's model it streams its text word by word (tollgate sends `token` events),
 * stops when the call's `signal` aborts, and takes `bindTools`: a tool call naming a tool that
 * was not bound fails, as a misspelt name would with a real model.
 *
 * @example
 * new ScriptedChatModel({ rules: [{
 *   when: /refund (\S+)/,
 *   reply: ({ match }) => ({ toolCalls: [{ name: "refund", args: { order_id: match[1] } }] }),
 *   then: ({ toolResults }) => `Refund: ${toolResults[0]!.text}`,
 * }] })
 */
export class ScriptedChatModel extends BaseChatModel<ScriptedChatModelCallOptions> {
  readonly rules: ScriptedRule[];
  readonly fallback: Omit<ScriptedRule, "when"> | undefined;
  readonly tokenDelayMs: number;

  constructor(params: ScriptedChatModelParams) {
    const { rules, fallback, tokenDelayMs, ...base } = params;
    super(base);
    // Without g or y, exec keeps no position between calls: the same message always matches alike.
    this.rules = rules.map((r) => (r.when instanceof RegExp ? { ...r, when: new RegExp(r.when.source, r.when.flags.replace(/[gy]/g, "")) } : r));
    this.fallback = fallback;
    this.tokenDelayMs = tokenDelayMs ?? 0;
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<ScriptedChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, ScriptedChatModelCallOptions> {
    return this.withConfig({ ...kwargs, tools: tools.map((t) => convertToOpenAITool(t)) });
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const { text, toolCalls } = await this.answer(messages, options.tools);
    const id = `scripted-${randomUUID()}`;
    let first = true;
    // Nothing before the first piece; each later one waits, and the wait ends at a cancel.
    const pause = async () => {
      await abortableSleep(first ? 0 : this.tokenDelayMs, options.signal);
      first = false;
    };
    for (const piece of text.match(/\s*\S+\s*$|\s*\S+/g) ?? []) {
      await pause();
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ id, content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    if (!toolCalls.length) return;
    await pause();
    const tool_call_chunks = toolCalls.map((c, index) => ({
      id: c.id ?? `call_${randomUUID().replace(/-/g, "").slice(0, 16)}`,
      name: c.name,
      args: JSON.stringify(c.args),
      index,
      type: "tool_call_chunk" as const,
    }));
    yield new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ id, content: "", tool_call_chunks }) });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let acc: ChatGenerationChunk | undefined;
    for await (const c of this._streamResponseChunks(messages, options, runManager)) acc = acc ? acc.concat(c) : c;
    return { generations: acc ? [acc] : [] };
  }

  /** The rule's answer for where the conversation stands, checked against the bound tools. */
  private async answer(messages: BaseMessage[], bound: ToolDefinition[] | undefined): Promise<{ text: string; toolCalls: ScriptedToolCall[] }> {
    const { request, toolResults, answered } = latestTurn(messages);
    const found = this.match(request);
    if (!found) throw new Error(`ScriptedChatModel: no rule matches the message ${quote(request)}, and there is no fallback`);
    const { rule, match, name } = found;
    const step = answered === 0 ? rule.reply : rule.then;
    if (step === undefined) {
      throw new Error(`ScriptedChatModel: ${name} has no \`then\` to answer the tool results of ${quote(request)}`);
    }
    const reply = typeof step === "function" ? await step({ match, request, toolResults, messages }) : step;
    const { text = "", toolCalls = [] } = typeof reply === "string" ? { text: reply } : reply;
    const names = bound?.map((t) => t.function.name);
    const unbound = names ? toolCalls.find((c) => !names.includes(c.name)) : undefined;
    if (unbound) {
      throw new Error(`ScriptedChatModel: ${name} calls ${quote(unbound.name)}, which is not a bound tool (${names!.join(", ") || "none"})`);
    }
    return { text, toolCalls };
  }

  private match(request: string): { rule: Omit<ScriptedRule, "when">; match: RegExpExecArray; name: string } | undefined {
    for (const [i, rule] of this.rules.entries()) {
      const match = rule.when instanceof RegExp ? rule.when.exec(request) : rule.when(request) ? wholeMatch(request) : null;
      if (match) return { rule, match, name: `rule ${i + 1} (${rule.when instanceof RegExp ? String(rule.when) : "a function"})` };
    }
    return this.fallback && { rule: this.fallback, match: wholeMatch(request), name: "the fallback" };
  }
}

/** The request as a match of itself, for rules that matched it some other way than a RegExp. */
function wholeMatch(request: string): RegExpExecArray {
  return /^[\s\S]*$/.exec(request)!;
}

/** A message in an error: quoted, and short enough for one line. */
function quote(s: string): string {
  const line = s.replace(/\s+/g, " ");
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}
