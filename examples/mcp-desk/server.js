// @ts-check
// The order desk: tollgate serving this project's createAgent over its MCP server's tools.
import { ChatOpenAI } from "@langchain/openai";
import { ConfigError, createTollgate, jsonLogger, loadConfig, serveTollgate } from "tollgate";
import { deskAgent, deskTools } from "./agent.js";

try {
  const env = loadConfig(process.env);
  const apiKey = process.env.DESK_API_KEY;
  const model = new ChatOpenAI({ model: process.env.DESK_MODEL ?? "gpt-4o-mini", apiKey: apiKey ?? "not-needed", configuration: { baseURL: process.env.DESK_BASE_URL }, streaming: true, maxRetries: 0 });
  const config = { ...env, secrets: apiKey ? [...env.secrets, apiKey] : env.secrets };
  const { tools } = await deskTools();
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }), graphs: { desk: deskAgent({ model, tools }) } });
  await serveTollgate(tollgate, config);
} catch (err) {
  process.stderr.write(`mcp desk failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
