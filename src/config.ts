import { z } from "zod";

const intFrom = (def: number, min: number) => z.coerce.number().int().min(min).default(def);
/** Seconds a timer may wait: Node fires any longer delay after 1 ms (2^31-1 ms is its limit). */
const timerSeconds = (def: number) => z.coerce.number().positive().max(2_147_483).default(def);

const envSchema = z.object({
  PORT: intFrom(8787, 0),
  HOST: z.string().min(1).default("127.0.0.1"),
  DATA_DIR: z.string().min(1).default("./data"),
  MODEL: z.string().min(1).optional(),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  APPROVAL_TTL_SECONDS: z.coerce.number().positive().default(900),
  MAX_ROUNDS: intFrom(8, 1),
  /** A model call with no output this long after the request is aborted (model_timeout). */
  MODEL_FIRST_TOKEN_TIMEOUT_SECONDS: timerSeconds(60),
  /** A model call silent this long mid-answer is aborted; keep-alives do not count as output. */
  MODEL_IDLE_TIMEOUT_SECONDS: timerSeconds(30),
  /** Interval of `: ping` comments on idle streams. */
  HEARTBEAT_SECONDS: timerSeconds(15),
  /** Delay between the demo model's tokens, so a person can watch them arrive. */
  DEMO_TOKEN_DELAY_MS: intFrom(15, 0),
  /** How many finished runs' event logs each thread keeps for replay. */
  EVENT_RETENTION_RUNS: intFrom(20, 1),
  /** How often the expiry closer looks for interrupts past their deadline. */
  EXPIRY_SWEEP_MS: intFrom(1000, 10),
  /** Test-only extra tools (slow/throwing); never set in production. */
  TOLLGATE_TEST_TOOLS: z.enum(["0", "1"]).default("0"),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** "demo" for the built-in scripted model, otherwise an OpenAI-compatible model name. */
  model: string;
  openaiApiKey: string | undefined;
  openaiBaseUrl: string | undefined;
  approvalTtlMs: number;
  maxRounds: number;
  modelTimeouts: { firstTokenMs: number; idleMs: number };
  heartbeatMs: number;
  demoTokenDelayMs: number;
  eventRetentionRuns: number;
  expirySweepMs: number;
  testTools: boolean;
}

/** Parses the environment once; everything below receives the typed object, never process.env. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // Empty strings (as in a copied .env.example) mean "unset".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  const model = e.MODEL ?? (e.OPENAI_API_KEY ? "gpt-4o-mini" : "demo");
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR,
    model,
    openaiApiKey: e.OPENAI_API_KEY,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    approvalTtlMs: Math.round(e.APPROVAL_TTL_SECONDS * 1000),
    maxRounds: e.MAX_ROUNDS,
    modelTimeouts: {
      firstTokenMs: Math.round(e.MODEL_FIRST_TOKEN_TIMEOUT_SECONDS * 1000),
      idleMs: Math.round(e.MODEL_IDLE_TIMEOUT_SECONDS * 1000),
    },
    heartbeatMs: Math.round(e.HEARTBEAT_SECONDS * 1000),
    demoTokenDelayMs: e.DEMO_TOKEN_DELAY_MS,
    eventRetentionRuns: e.EVENT_RETENTION_RUNS,
    expirySweepMs: e.EXPIRY_SWEEP_MS,
    testTools: e.TOLLGATE_TEST_TOOLS === "1",
  };
}
