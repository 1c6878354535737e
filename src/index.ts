// The package's server API (`import { createTollgate } from "tollgate"`): wire your own tools and
// model into a Tollgate and serve it. The client, the wire types and the React hook have their
// own entries: `tollgate/client`, `tollgate/protocol`, `tollgate/react`.
import { builtInAgent } from "../graphs/served-agent.js";
import { createTollgate as createWith, type Tollgate, type TollgateOptions } from "./tollgate.js";

export type { Tollgate, TollgateOptions } from "./tollgate.js";

/**
 * A Tollgate serving your graphs (`graphs`), or the built-in agent on your model and tools
 * (`model`, `tools`, `systemPrompt`; the demo's by default).
 */
export function createTollgate(o: TollgateOptions): Promise<Tollgate> {
  return createWith({ agent: builtInAgent, ...o });
}
export { serveTollgate, type ServeOptions, type ServedTollgate } from "./serve.js";
export { ConfigError, loadConfig, type Config, type Limits } from "./config.js";
export { jsonLogger, LOG_LEVELS, silentLogger, type JsonLoggerOptions, type Logger, type LogLevel } from "./logger.js";
export type { Clock } from "./clock.js";
export { defineTool, TollgateTool, type ToolKind, type ToolMeta } from "./tools/tollgate-tool.js";
export { throwIfAborted, toolContext, type ToolContext } from "./tools/tool-context.js";
export { StalePreview } from "./tools/stale-preview.js";
export type { ApprovalPolicy } from "./protocol/index.js";
