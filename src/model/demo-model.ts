import type { BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import type { ScriptedReply, ScriptedTurn } from "./scripted-chat-model.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";
import { nextDemoStep } from "./demo-intent.js";

export interface DemoModelParams extends BaseChatModelParams {
  /** Pause between tokens, so a person sees them arrive. */
  tokenDelayMs?: number;
}

/**
 * The built-in offline model: a scripted model whose one script (`nextDemoStep`) answers every
 * message, streamed token by token. It never touches the network, so `npm start` works on a
 * machine with none.
 */
export class DemoChatModel extends ScriptedChatModel {
  constructor(params: DemoModelParams = {}) {
    const { tokenDelayMs, ...base } = params;
    super({ ...base, rules: [], fallback: { reply: demoReply, then: demoReply }, tokenDelayMs: tokenDelayMs ?? 15 });
  }

  override _llmType(): string {
    return "tollgate-demo";
  }

  /** The script already knows the demo tools by name; binding changes nothing. */
  override bindTools(): this {
    return this;
  }
}

function demoReply({ messages }: ScriptedTurn): ScriptedReply {
  const step = nextDemoStep(messages);
  return { text: step.text, toolCalls: step.kind === "call" ? step.calls : [] };
}
