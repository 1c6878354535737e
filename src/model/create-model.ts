import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAICompletions } from "@langchain/openai";
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
  // ChatOpenAI's Chat Completions flavour: plain ChatOpenAI switches some model names to the
  // Responses API, which OpenAI-compatible servers (vLLM, Ollama…) do not speak.
  return new ChatOpenAICompletions({
    model: s.model,
    apiKey: s.openaiApiKey ?? "not-needed",
    // The SDK would print a garbage response line to the console; the run reports it instead.
    configuration: { baseURL: s.openaiBaseUrl, logLevel: "off" },
    streaming: true,
    streamUsage: true,
    // A failed call is reported to the person at once; silent retries would also double the
    // wait before a cancel or an error shows.
    maxRetries: 0,
  });
}
