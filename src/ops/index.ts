export { createSecretScrubber, SCRUBBED } from "./secret-scrubber.js";
export type { SecretScrubber } from "./secret-scrubber.js";
export { scrubbingLogger } from "./scrubbing-logger.js";
export { Redactor } from "./redactor.js";
export { skipIdleRunTrees } from "./untraced-context.js";
export { createTracing, NO_TRACING } from "./tracing.js";
export type { Tracing, TracingOptions } from "./tracing.js";
export { TraceMasker } from "./tracing-masker.js";
