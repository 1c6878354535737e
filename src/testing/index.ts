// The package's test kit (`import { ScriptedChatModel } from "tollgate/testing"`): a chat model
// driven by your own rules, so your tools and graphs run through the gate in tests without a key.
export {
  ScriptedChatModel,
  type ScriptedAnswer,
  type ScriptedChatModelCallOptions,
  type ScriptedChatModelParams,
  type ScriptedReply,
  type ScriptedRule,
  type ScriptedToolCall,
  type ScriptedTurn,
} from "../model/index.js";
