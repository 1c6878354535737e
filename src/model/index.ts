export { createModel } from "./create-model.js";
export type { ModelSettings } from "./create-model.js";
export { DemoChatModel } from "./demo-model.js";
export { nextDemoStep } from "./demo-intent.js";
export { ModelCallError, describeModelFailure } from "./model-call-error.js";
export { ScriptedChatModel } from "./scripted-chat-model.js";
export type {
  ScriptedAnswer,
  ScriptedChatModelCallOptions,
  ScriptedChatModelParams,
  ScriptedReply,
  ScriptedRule,
  ScriptedToolCall,
  ScriptedTurn,
} from "./scripted-chat-model.js";
export { chatModelName } from "./model-name.js";
