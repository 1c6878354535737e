import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ChatResult } from "@langchain/core/outputs";
import type { Database, Statement } from "better-sqlite3";
import { loadConfig } from "../src/config.js";
import { createModel } from "../src/model/index.js";
import { openDatabase } from "../src/store/index.js";
import { setupDemoTables, type TollgateTool } from "../src/tools/index.js";
import { lookupOrderTool } from "../src/tools/demo/lookup-order.js";
import { refundOrderTool } from "../src/tools/demo/refund-order.js";
import { sendEmailTool } from "../src/tools/demo/send-email.js";
import type { AgentGraphOptions } from "./agent.js";

/**
 * The Studio-facing pieces behind `graphs/agent.ts:graph` (see `langgraph.json`). `langgraph dev`
 * imports that module, and so does the Hono server, so building these must not open a database,
 * start a timer or throw: the demo database opens at the first tool call, and a bad environment
 * surfaces as a model error in the Studio run (the Hono server reports it itself, from main.ts).
 */

/** The variables the Studio graph reads; the server's own ones (PORT, TTL…) do not apply there. */
const STUDIO_ENV = ["DATA_DIR", "MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MAX_ROUNDS", "DEMO_TOKEN_DELAY_MS"];

/**
 * Options for the graph `langgraph dev` serves: the configured model (demo by default) and the
 * demo tools on `$DATA_DIR/tollgate.db`. No ledger is passed: approved calls are claimed in
 * memory, once per process (the Studio server keeps its own checkpoints, not tollgate's store).
 */
export function studioGraphOptions(env: Record<string, string | undefined> = process.env): AgentGraphOptions {
  const picked = Object.fromEntries(STUDIO_ENV.map((k) => [k, env[k]]));
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(picked);
  } catch (err) {
    const problem = err instanceof Error ? err.message : String(err);
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
  };
}

/** `tollgate.db` with the server's settings and schema, plus the seeded demo tables. */
function openDemoDatabase(dataDir: string): Database {
  const db = openDatabase(dataDir);
  setupDemoTables(db);
  return db;
}

/**
 * The three demo tools (the ones `createDemoTools` builds) on a database opened at first use.
 * They are built one by one because `createDemoTools` seeds its tables, which needs the database.
 */
export function lazyDemoTools(open: () => Database): TollgateTool[] {
  const db = lazyDatabase(open);
  return [lookupOrderTool(db), refundOrderTool(db), sendEmailTool(db)];
}

/**
 * A Database that calls `open` the first time something is done with it. `prepare` hands back
 * a statement that is prepared at its first use, so tools can prepare theirs when they are
 * built, before any database exists.
 */
export function lazyDatabase(open: () => Database): Database {
  let db: Database | undefined;
  const real = () => (db ??= open());
  return new Proxy({} as Database, {
    get(_target, prop) {
      if (prop === "prepare") return (sql: string) => lazyStatement(() => real().prepare(sql));
      return bound(real(), prop);
    },
  });
}

function lazyStatement(prepare: () => Statement): Statement {
  let stmt: Statement | undefined;
  return new Proxy({} as Statement, {
    get: (_target, prop) => bound((stmt ??= prepare()), prop),
  });
}

function bound(target: object, prop: PropertyKey): unknown {
  const value: unknown = Reflect.get(target, prop);
  return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
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
