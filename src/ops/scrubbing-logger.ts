import type { LogFields, Logger } from "../logger.js";
import type { SecretScrubber } from "./secret-scrubber.js";

/**
 * A logger whose every line is scrubbed before `inner` sees it: the message and all fields,
 * errors included (their message and stack), and a child's bindings. The one exit for log lines:
 * whatever a caller passes, an upstream error echoing the API key or a bearer token cannot reach
 * the log.
 */
export function scrubbingLogger(inner: Logger, scrubber: SecretScrubber): Logger {
  const line =
    (write: Logger["info"]) =>
    (msg: string, fields?: LogFields): void =>
      write(scrubber.scrub(msg), fields === undefined ? undefined : scrubber.scrubDeep(fields));
  return {
    debug: line((m, f) => inner.debug(m, f)),
    info: line((m, f) => inner.info(m, f)),
    warn: line((m, f) => inner.warn(m, f)),
    error: line((m, f) => inner.error(m, f)),
    child: (bindings) => scrubbingLogger(inner.child(scrubber.scrubDeep(bindings)), scrubber),
  };
}
