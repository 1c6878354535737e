import { randomUUID } from "node:crypto";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { abortableSleep } from "../lib/index.js";
import { nextDemoStep } from "./demo-intent.js";

export interface DemoModelParams extends BaseChatModelParams {
  /** Pause between tokens, so a person sees them arrive. */
  tokenDelayMs?: number;
}

/**
 * The built-in offline model: scripted by `nextDemoStep`, streamed token by token. It never
 * touches the network, so `npm start` works on a machine with none.
 */
export class DemoChatModel extends BaseChatModel {
  readonly tokenDelayMs: number;

  constructor(params: DemoModelParams = {}) {
    super(params);
    this.tokenDelayMs = params.tokenDelayMs ?? 15;
  }

  _llmType(): string {
    return "tollgate-demo";
  }

  /** The script already knows the demo tools by name; binding changes nothing. */
  override bindTools(): this {
    return this;
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const step = nextDemoStep(messages);
    const id = `demo-${randomUUID()}`;
    for (const piece of step.text.match(/\s*\S+/g) ?? []) {
      await abortableSleep(this.tokenDelayMs, options.signal);
      const chunk = new ChatGenerationChunk({ text: piece, message: new AIMessageChunk({ id, content: piece }) });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    if (step.kind === "call") {
      const tool_call_chunks = step.calls.map((c, index) => ({
        id: `call_${randomUUID().replace(/-/g, "").slice(0, 16)}`,
        name: c.name,
        args: JSON.stringify(c.args),
        index,
        type: "tool_call_chunk" as const,
      }));
      yield new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ id, content: "", tool_call_chunks }) });
    }
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    let acc: ChatGenerationChunk | undefined;
    for await (const c of this._streamResponseChunks(messages, options)) acc = acc ? acc.concat(c) : c;
    return { generations: acc ? [acc] : [] };
  }
}
