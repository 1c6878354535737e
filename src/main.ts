#!/usr/bin/env node
// The `tollgate` command (and `npm start`): the server with the demo tools and the model the
// environment names. Your own server file does the same with your tools: see src/index.ts.
import { ConfigError, loadConfig } from "./config.js";
import { jsonLogger } from "./logger.js";
import { serveTollgate } from "./serve.js";
import { createTollgate } from "./tollgate.js";

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }) });
  await serveTollgate(tollgate, config);
}

main().catch((err: unknown) => {
  process.stderr.write(`tollgate failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  // 2: the configuration is refused (fix it and start again); 1: anything else.
  process.exit(err instanceof ConfigError ? 2 : 1);
});
