import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ChatResult } from "@langchain/core/outputs";
import type { Database } from "better-sqlite3";
import { type Config, loadConfig } from "../src/config.js";
import { createModel } from "../src/model/index.js";
import { openDatabase } from "../src/store/index.js";
import { setupDemoTables, type TollgateTool } from "../src/tools/index.js";
import { lookupOrderTool } from "../src/tools/demo/lookup-order.js";
import { refundOrderTool } from "../src/tools/demo/refund-order.js";
import { sendEmailTool } from "../src/tools/demo/send-email.js";
import { type AgentGraphOptions, createAgentWorkflow } from "./agent.js";

/**
 * LangGraph Studio's entry file (`langgraph.json` → `graphs/studio.ts:graph`), and the only one:
 * nothing in src/ or graphs/ imports it, so the Hono server never builds this graph or reads the
 * environment through it. `langgraph dev` imports it, so loading it must not open a database,
 * start a timer or throw: the demo database opens at the first tool call, and a bad environment
 * surfaces as a model error in the Studio run.
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
];

/**
 * Options for the graph `langgraph dev` serves: the configured model (demo by default) and the
 * demo tools on `$DATA_DIR/tollgate.db`. No ledger is passed: approved calls are claimed in
 * memory, once per process (the Studio server keeps its own checkpoints, not tollgate's store).
 */
export function studioGraphOptions(env: Record<string, string | undefined> = process.env): AgentGraphOptions {
  const picked = Object.fromEntries(STUDIO_ENV.map((k) => [k, env[k]]));
  let config: Config;
  try {
    config = loadConfig(picked);
  } catch (err) {
    // One line: model errors are shown by their first line only.
    const problem = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, " ");
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
 * What LangGraph Studio loads: the workflow the Hono server compiles, with the same gate, but
 * without a checkpointer because `langgraph dev` brings its own.
 */
export const graph = createAgentWorkflow(studioGraphOptions()).compile({ interruptBefore: ["call_tool"] });
