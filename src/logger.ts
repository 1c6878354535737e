/** Where the server's own diagnostics go. Stack traces belong here, never in responses. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** One line per entry on stderr, so stdout stays free for the "listening" line tests wait for. */
export function consoleLogger(): Logger {
  const write = (level: string, msg: string, fields?: Record<string, unknown>) => {
    const extra = fields ? ` ${JSON.stringify(fields, errorReplacer)}` : "";
    process.stderr.write(`${new Date().toISOString()} ${level} ${msg}${extra}\n`);
  };
  return {
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
