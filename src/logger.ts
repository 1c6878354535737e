import { pino, stdSerializers } from "pino";

/** Extra fields of a line. The names tollgate uses: `thread_id`, `run_id`, `principal` (a sub), `outcome`, `err`. */
export type LogFields = Record<string, unknown>;

/** Where the server's own diagnostics go. Stack traces belong here, never in responses. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose every line also carries `bindings` (e.g. a run's `thread_id` and `run_id`). */
  child(bindings: LogFields): Logger;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface JsonLoggerOptions {
  /** Lines below this level are dropped (`LOG_LEVEL`). */
  level: LogLevel;
  /** Default: stdout, the stream the "tollgate listening on" line goes to, so the two never interleave mid-line. */
  destination?: { write(line: string): unknown };
}

/**
 * One JSON object per line: `level` (its name), `time` (ISO 8601), `msg`, `pid`, `hostname` and
 * the line's fields. An `err` field is written as `{type, message, stack}` (for operators only:
 * clients never see a stack).
 */
export function jsonLogger(o: JsonLoggerOptions): Logger {
  return wrap(
    pino(
      {
        level: o.level,
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        serializers: { err: serializeError },
      },
      // process.stdout, not pino's own fd writer: the same stream as the listening line, and
      // synchronous on pipes and files, so a line written just before exit is not lost.
      (o.destination ?? process.stdout) as pino.DestinationStream,
    ),
  );
}

function wrap(p: pino.Logger): Logger {
  const line =
    (level: "debug" | "info" | "warn" | "error") =>
    (msg: string, fields?: LogFields): void => {
      if (fields) p[level](fields, msg);
      else p[level](msg);
    };
  return {
    debug: line("debug"),
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    child: (bindings) => wrap(p.child(bindings)),
  };
}

/**
 * pino's error serializer, also for an error the scrubbing logger has already turned into a plain
 * `{name, message, stack}` (scrubbed): its name becomes `type`, as for a real one.
 */
function serializeError(value: unknown): unknown {
  if (value instanceof Error) return stdSerializers.err(value);
  if (value && typeof value === "object" && typeof (value as { message?: unknown }).message === "string") {
    const { name, ...rest } = value as { name?: unknown };
    return { type: typeof name === "string" ? name : "Error", ...rest };
  }
  return value;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger };
