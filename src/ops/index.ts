export { createSecretScrubber, SCRUBBED } from "./secret-scrubber.js";
export type { SecretScrubber } from "./secret-scrubber.js";
export { scrubbingLogger } from "./scrubbing-logger.js";
export { Redactor } from "./redactor.js";
export { skipIdleRunTrees } from "./untraced-context.js";
export { Metrics, NO_METER, RUN_OUTCOMES, APPROVAL_DECISIONS, MODEL_ERROR_CODES } from "./metrics.js";
export type { GaugeSources, MetricsOptions, RunKind, RunMeter } from "./metrics.js";
