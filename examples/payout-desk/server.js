// @ts-check
// The payout desk: tollgate's server with this project's tools and model.
import { ChatOpenAI } from "@langchain/openai";
import { ConfigError, createTollgate, jsonLogger, loadConfig, serveTollgate } from "tollgate";
import { DESK_PROMPT } from "./prompt.js";
import { payoutDeskTools } from "./tools.js";

// The model: any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, LM Studio…).
const apiKey = process.env.DESK_API_KEY;
const model = new ChatOpenAI({
  model: process.env.DESK_MODEL ?? "gpt-4o-mini",
  apiKey: apiKey ?? "not-needed",
  configuration: { baseURL: process.env.DESK_BASE_URL },
  // Chat Completions, which every compatible server speaks (not OpenAI's Responses API).
  useResponsesApi: false,
  streaming: true,
  // tollgate reports a failed call to the person at once instead of retrying behind their back.
  maxRetries: 0,
});

try {
  // Port, data dir, auth tokens, limits: tollgate's own variables (see its README).
  const env = loadConfig(process.env);
  // The key must never show in a response, an event or a log line: tollgate scrubs its secrets.
  const config = { ...env, secrets: apiKey ? [...env.secrets, apiKey] : env.secrets };
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }), model, tools: () => payoutDeskTools(), systemPrompt: DESK_PROMPT });
  await serveTollgate(tollgate, config); // prints "tollgate listening on …"; SIGTERM/SIGINT shut it down cleanly
} catch (err) {
  // One line and no stack, as `npx tollgate` prints: 2 when the configuration is refused (fix it
  // and start again), 1 for anything else (e.g. DATABASE_URL's server cannot be reached).
  process.stderr.write(`payout desk failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
