import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ChatResult } from "@langchain/core/outputs";
import type { Database } from "better-sqlite3";
import { type Config, loadConfig } from "../src/config.js";
import { jsonLogger } from "../src/logger.js";
import { createModel } from "../src/model/index.js";
import { createSecretScrubber, createTracing, NO_TRACING, scrubbingLogger, SILENT_TRACING, type Tracing } from "../src/ops/index.js";
import { openDatabase } from "../src/store/index.js";
import { setupDemoTables, type TollgateTool, ToolRegistry } from "../src/tools/index.js";
import { lookupOrderTool } from "../src/tools/demo/lookup-order.js";
import { refundOrderTool } from "../src/tools/demo/refund-order.js";
import { sendEmailTool } from "../src/tools/demo/send-email.js";
import type { AgentGraphOptions } from "./agent.js";

/*
 * What every graph `langgraph dev` serves from this repository is built from (`langgraph.json`):
 * the settings it reads from the environment, the configured model (demo by default), the demo
 * tools on `$DATA_DIR/tollgate.db`, and LangSmith tracing through the server's masking tracer.
 * Loading it must not open a database, start a timer or throw: the demo database opens at the
 * first tool call, and a bad environment surfaces as a model error in the Studio run.
 */

/** The variables the Studio graph reads; the server's own ones (PORT, TTL…) do not apply there. */
const STUDIO_ENV = [
  "DATA_DIR",
  "MODEL",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "MAX_ROUNDS",
  "DEMO_TOKEN_DELAY_MS",
  "MODEL_FIRST_TOKEN_TIMEOUT_SECONDS",
  "MODEL_IDLE_TIMEOUT_SECONDS",
  // LangSmith, under the names LangChain reads too: Studio's traces go through our masking tracer.
  ...["TRACING", "TRACING_V2", "ENDPOINT", "API_KEY", "PROJECT", "WORKSPACE_ID"].flatMap((k) => [`LANGSMITH_${k}`, `LANGCHAIN_${k}`]),
];

/** The Studio graph's settings, or why the environment is refused. */
export type StudioConfig = Config | { problem: string };

/** Reads the Studio graph's settings; a refusal is one line (model errors show their first line only). */
export function studioConfig(env: Record<string, string | undefined> = process.env): StudioConfig {
  try {
    return loadConfig(Object.fromEntries(STUDIO_ENV.map((k) => [k, env[k]])));
  } catch (err) {
    return { problem: (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, " ") };
  }
}

/**
 * Options for the graph `langgraph dev` serves: the configured model (demo by default) and the
 * demo tools on `$DATA_DIR/tollgate.db`. No ledger is passed: approved calls are claimed in
 * memory, once per process (the Studio server keeps its own checkpoints, not tollgate's store).
 */
export function studioGraphOptions(config: StudioConfig): AgentGraphOptions {
  if ("problem" in config) {
    const { problem } = config;
    return { model: new MisconfiguredModel(problem), tools: lazyDemoTools(() => { throw new Error(problem); }) };
  }
  return {
    model: createModel({
      model: config.model,
      openaiApiKey: config.openaiApiKey,
      openaiBaseUrl: config.openaiBaseUrl,
      demoTokenDelayMs: config.demoTokenDelayMs,
    }),
    tools: lazyDemoTools(() => openDemoDatabase(config.dataDir)),
    maxRounds: config.maxRounds,
    modelTimeouts: config.modelTimeouts,
  };
}

/** `tollgate.db` with the server's settings and schema, plus the seeded demo tables. */
function openDemoDatabase(dataDir: string): Database {
  const db = openDatabase(dataDir);
  setupDemoTables(db);
  return db;
}

/** The three demo tools (as `createDemoTools` builds them) on a database opened at their first call. */
export function lazyDemoTools(open: () => Database): TollgateTool[] {
  let db: Database | undefined;
  const get = () => (db ??= open());
  return [lookupOrderTool(get), refundOrderTool(get), sendEmailTool(get)];
}

/**
 * Stands in for the model when the environment is invalid, so that importing the graph module
 * never throws: each Studio run then ends with the configuration error as its model error.
 */
class MisconfiguredModel extends BaseChatModel {
  constructor(private readonly problem: string) {
    super({});
  }

  _llmType(): string {
    return "tollgate-misconfigured";
  }

  override bindTools(): this {
    return this;
  }

  async _generate(): Promise<ChatResult> {
    throw new Error(this.problem);
  }
}

/**
 * LangSmith tracing for Studio's runs when the environment turns it on: the server's tracer,
 * which masks sensitive tool arguments and outputs and scrubs secrets. Carried in the graph's own
 * config, it keeps LangChain from adding its unmasked tracer (it adds one only to a config that
 * has none). With a refused environment there are no settings to trace with, and a resumed call
 * would still be traced (its arguments unmasked) before its tool fails: nothing is traced then.
 */
export function studioTracing(config: StudioConfig, tools: readonly TollgateTool[]): Tracing {
  if ("problem" in config) return SILENT_TRACING;
  if (!config.tracing) return NO_TRACING;
  const scrubber = createSecretScrubber(config.secrets);
  // Only the tracer's own warnings (LangSmith unreachable) are logged here.
  const log = scrubbingLogger(jsonLogger({ level: "warn" }), scrubber);
  return createTracing({ settings: config.langsmith, registry: new ToolRegistry(tools), scrubber, log });
}
