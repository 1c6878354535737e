import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/**
 * The name a chat model goes by in the log: the model name LangChain's tracing reports for it
 * (`ls_model_name`, e.g. `gpt-4o-mini`), else its type (`_llmType()`, e.g. `openai`).
 */
export function chatModelName(model: BaseChatModel): string {
  let name: string | undefined;
  try {
    name = model.getLsParams({} as Parameters<BaseChatModel["getLsParams"]>[0]).ls_model_name;
  } catch {
    // A model may need real call options to describe itself; its type still names it.
  }
  return name || model._llmType();
}
