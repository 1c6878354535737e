import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { DemoChatModel } from "./demo-model.js";

export interface ModelSettings {
  model: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  demoTokenDelayMs?: number;
}

/**
 * `demo` is the offline scripted model; any other name is served by an OpenAI-compatible Chat
 * Completions endpoint (OpenAI, vLLM, Ollama, LM Studio…).
 */
export function createModel(s: ModelSettings): BaseChatModel {
  if (s.model === "demo") return new DemoChatModel({ tokenDelayMs: s.demoTokenDelayMs });
  return new ChatOpenAI({
    model: s.model,
    apiKey: s.openaiApiKey ?? "not-needed",
    configuration: s.openaiBaseUrl ? { baseURL: s.openaiBaseUrl } : undefined,
    streaming: true,
    streamUsage: true,
    // A failed call is reported to the person at once; silent retries would also double the
    // wait before a cancel or an error shows.
    maxRetries: 0,
    useResponsesApi: false,
  });
}
