import { ConfigError, loadConfig } from "./config.js";
import { jsonLogger } from "./logger.js";
import { serveTollgate } from "./serve.js";
import { createTollgate, type TollgateOptions } from "./tollgate.js";

/**
 * The `tollgate` command's work, for what it is handed to serve: the configuration from the
 * environment and `--graphs`, the server on its socket, and the exit code when it cannot start
 * (2: the configuration is refused; 1: anything else), with a one-line message and no stack.
 */
export function runCommand(o: { argv: readonly string[]; env: NodeJS.ProcessEnv; serve: Omit<TollgateOptions, "config" | "log"> }): void {
  start(o).catch((err: unknown) => {
    process.stderr.write(`tollgate failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}

async function start(o: { argv: readonly string[]; env: NodeJS.ProcessEnv; serve: Omit<TollgateOptions, "config" | "log"> }): Promise<void> {
  // `--graphs <file>` is TOLLGATE_GRAPHS given on the command line, and wins over it.
  const config = loadConfig({ ...o.env, ...graphsArg(o.argv) });
  const tollgate = await createTollgate({ ...o.serve, config, log: jsonLogger({ level: config.logLevel }) });
  await serveTollgate(tollgate, config);
}

/** `--graphs <file>` or `--graphs=<file>`; anything else on the command line is refused. */
function graphsArg(args: readonly string[]): { TOLLGATE_GRAPHS?: string } {
  if (args.length === 0) return {};
  const [first, second] = args;
  if (first?.startsWith("--graphs=") && args.length === 1) return { TOLLGATE_GRAPHS: first.slice("--graphs=".length) };
  if (first === "--graphs" && second && args.length === 2) return { TOLLGATE_GRAPHS: second };
  throw new ConfigError(`usage: tollgate [--graphs <langgraph.json>]; got '${args.join(" ").slice(0, 200)}'`);
}
