#!/usr/bin/env node
// The `tollgate` command (and `npm start`): the server with the demo tools and the model the
// environment names. Your own server file does the same with your tools: see src/index.ts.
import { ConfigError, loadConfig } from "./config.js";
import { jsonLogger } from "./logger.js";
import { serveTollgate } from "./serve.js";
import { createTollgate } from "./tollgate.js";

async function main(): Promise<void> {
  // `--graphs <file>` is TOLLGATE_GRAPHS given on the command line, and wins over it.
  const config = loadConfig({ ...process.env, ...graphsArg(process.argv.slice(2)) });
  const tollgate = await createTollgate({ config, log: jsonLogger({ level: config.logLevel }) });
  await serveTollgate(tollgate, config);
}

/** `--graphs <file>` or `--graphs=<file>`; anything else on the command line is refused. */
function graphsArg(args: string[]): { TOLLGATE_GRAPHS?: string } {
  if (args.length === 0) return {};
  const [first, second] = args;
  if (first?.startsWith("--graphs=") && args.length === 1) return { TOLLGATE_GRAPHS: first.slice("--graphs=".length) };
  if (first === "--graphs" && second && args.length === 2) return { TOLLGATE_GRAPHS: second };
  throw new ConfigError(`usage: tollgate [--graphs <langgraph.json>]; got '${args.join(" ").slice(0, 200)}'`);
}

main().catch((err: unknown) => {
  process.stderr.write(`tollgate failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  // 2: the configuration is refused (fix it and start again); 1: anything else.
  process.exit(err instanceof ConfigError ? 2 : 1);
});
