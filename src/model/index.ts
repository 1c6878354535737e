export { createModel } from "./create-model.js";
export type { ModelSettings } from "./create-model.js";
export { DemoChatModel } from "./demo-model.js";
export { nextDemoStep } from "./demo-intent.js";
export { ModelCallError, describeModelFailure } from "./model-call-error.js";
export { chatModelName } from "./model-name.js";
