import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/**
 * A chat model for in-process tests: answers each call with whatever `script` makes of the
 * messages. No tokens are streamed; binding tools changes nothing.
 */
export class Scripted extends BaseChatModel {
  constructor(private readonly script: (messages: BaseMessage[]) => AIMessage) {
    super({});
  }
  _llmType() {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    return { generations: [{ text: "", message: this.script(messages) }] };
  }
}
