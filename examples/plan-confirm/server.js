// @ts-check
// The migration desk: tollgate serving this project's plan-first graph.
import { ChatOpenAI } from "@langchain/openai";
import { ConfigError, createTollgate, jsonLogger, loadConfig, serveTollgate } from "tollgate";
import { migrationTools, planGraph } from "./graph.js";

try {
  const env = loadConfig(process.env);
  const apiKey = process.env.PLAN_API_KEY;
  const model = new ChatOpenAI({ model: process.env.PLAN_MODEL ?? "gpt-4o-mini", apiKey: apiKey ?? "not-needed", configuration: { baseURL: process.env.PLAN_BASE_URL }, streaming: true, maxRetries: 0 });
  const config = { ...env, secrets: apiKey ? [...env.secrets, apiKey] : env.secrets };
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }), graphs: { migrations: planGraph({ model, tools: migrationTools() }) } });
  await serveTollgate(tollgate, config);
} catch (err) {
  process.stderr.write(`migration desk failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
