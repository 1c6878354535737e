// @ts-check
// The support desk: tollgate serving this project's own supervisor graph.
import { ChatOpenAI } from "@langchain/openai";
import { ConfigError, createTollgate, jsonLogger, loadConfig, serveTollgate } from "tollgate";
import { supportGraph } from "./graph.js";
import { billingTools, shippingTools } from "./tools.js";

try {
  const env = loadConfig(process.env);
  const apiKey = process.env.SUPPORT_API_KEY;
  const model = new ChatOpenAI({ model: process.env.SUPPORT_MODEL ?? "gpt-4o-mini", apiKey: apiKey ?? "not-needed", configuration: { baseURL: process.env.SUPPORT_BASE_URL }, streaming: true, maxRetries: 0 });
  const config = { ...env, secrets: apiKey ? [...env.secrets, apiKey] : env.secrets };
  const graph = supportGraph({ model, billing: billingTools(), shipping: shippingTools() });
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }), graphs: { support: graph } });
  await serveTollgate(tollgate, config);
} catch (err) {
  process.stderr.write(`support desk failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
