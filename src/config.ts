import { z } from "zod";
import { ANONYMOUS, type AuthSettings, type DirectoryEntry, type Principal, ROLES } from "./auth/index.js";
import { formatIssues } from "./protocol/index.js";
import { LOG_LEVELS, type LogLevel } from "./logger.js";

/** A configuration the server must not start with; `main` prints its one-line message and exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

const json = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: "custom", message: "is not valid JSON" });
    return z.NEVER;
  }
});

/** A principal as AUTH_TOKENS and AUTH_DIRECTORY declare it, with how the channels reach it. */
const principalEntry = z.object({
  // `anonymous` owns every thread made with auth off: no real principal may be it.
  sub: z.string().min(1).max(256).refine((sub) => sub !== ANONYMOUS.sub, "the sub 'anonymous' is reserved"),
  // The contract's roles or AUTH_ROLES' (checked once both are read).
  roles: z.array(z.string().min(1).max(64)),
  slack_user: z.string().regex(/^[UW][A-Z0-9]{2,31}$/, "a Slack user id is U… or W…").optional(),
  email: z.string().email().max(320).optional(),
});

const authTokens = json.pipe(
  z.record(z.string().min(8, "a token must be at least 8 characters"), principalEntry, {
    error: 'must map tokens to principals: {"<token>": {"sub": "alice", "roles": ["user"]}}',
  }),
);

const authDirectory = json.pipe(z.array(principalEntry, { error: 'must be a JSON array: [{"sub": "fin1", "roles": ["approver"], "slack_user": "U0FIN1"}]' }));

const intFrom = (def: number, min: number) => z.coerce.number().int().min(min).default(def);
/** Seconds a timer may wait: Node fires any longer delay after 1 ms (2^31-1 ms is its limit). */
const timerSeconds = (def: number) => z.coerce.number().positive().max(2_147_483).default(def);

/**
 * Every variable the server reads, with its meaning: `.describe()` is the meaning, `.meta({
 * defaultInWords })` a default that depends on other variables. `npm run docs:config` writes
 * docs/reference/configuration.md from this, and a test fails while the two differ.
 */
export const envSchema = z.object({
  PORT: intFrom(8787, 0).describe("listen port (`0` = any free port; the chosen one is printed)"),
  HOST: z.string().min(1).default("127.0.0.1").describe(
    "listen address. A non-loopback address needs `AUTH_TOKENS` or `AUTH_JWKS_URL` (or `TOLLGATE_INSECURE_NO_AUTH=1`): without auth the server refuses to start there (exit 2)",
  ),
  DATA_DIR: z.string().min(1).default("./data").describe("where `tollgate.db` lives (threads, checkpoints, interrupts, run events, ledger, demo tables)"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, { error: "must be a postgres://user:password@host:port/database URL" })
    .optional()
    .describe(
      "`postgres://user:password@host:5432/db`: every store in that PostgreSQL database, shared by any number of replicas (see [Many replicas on one PostgreSQL](../guides/replicas-and-postgresql.md)); unset = SQLite in `DATA_DIR`",
    ),
  DATABASE_POOL_SIZE: intFrom(10, 2).describe("connections each replica keeps to PostgreSQL (plus one that listens for other replicas' notices)"),
  REPLICA_LEASE_SECONDS: timerSeconds(15).describe(
    "a replica that has not renewed its lease for this long is dead: the others close its runs as `error` within twice this",
  ),
  MODEL: z
    .string()
    .min(1)
    .optional()
    .meta({
      description: "`demo` = the built-in offline scripted model; anything else is a model name on an OpenAI-compatible endpoint",
      defaultInWords: "`demo` without `OPENAI_API_KEY`, else `gpt-4o-mini`",
    }),
  OPENAI_API_KEY: z.string().optional().describe("key for that endpoint; scrubbed like every other secret"),
  OPENAI_BASE_URL: z
    .string()
    .url()
    .optional()
    .meta({ description: "any OpenAI-compatible Chat Completions endpoint (vLLM, Ollama, LM Studio…)", defaultInWords: "OpenAI's" }),
  APPROVAL_TTL_SECONDS: z.coerce
    .number()
    .positive()
    .default(900)
    .describe("approval window: after it a pending call is closed as expired, never run (a tool's `ttl_seconds` may shorten it for its calls)"),
  APPROVAL_ESCALATE_SECONDS: z.coerce
    .number()
    .positive()
    .max(2_147_483)
    .optional()
    .describe(
      "a call still waiting this long is escalated: one `approval.escalated` webhook, `escalated` in `/approvals` (a tool's `escalate_after_seconds` wins); unset: only tools that set their own",
    ),
  MAX_ROUNDS: intFrom(8, 1).describe("model calls per run; then `done` with `outcome: \"max_rounds\"`"),
  MODEL_FIRST_TOKEN_TIMEOUT_SECONDS: timerSeconds(60).describe(
    "a model call with no output this long after the request is aborted: `error` `model_timeout`",
  ),
  MODEL_IDLE_TIMEOUT_SECONDS: timerSeconds(30).describe(
    "a model call silent this long in the middle of its answer is aborted the same way; keep-alives do not count as output",
  ),
  HEARTBEAT_SECONDS: timerSeconds(15).describe("interval of the `: ping` comments on every stream"),
  DEMO_TOKEN_DELAY_MS: intFrom(15, 0).describe("pause between the demo model's tokens, so a person can watch them arrive"),
  EVENT_RETENTION_RUNS: intFrom(20, 1).describe("finished runs per thread whose event logs are kept for replay"),
  EXPIRY_SWEEP_MS: intFrom(1000, 10).describe("how often overdue approvals are closed"),
  AUTH_TOKENS: authTokens
    .optional()
    .describe(
      'JSON: static bearer tokens → principals, `{"<token>": {"sub": "alice", "roles": ["user"]}}` (tokens of 8+ characters). With neither this nor `AUTH_JWKS_URL`, auth is off: every request is `anonymous` with every role',
    ),
  AUTH_DIRECTORY: authDirectory
    .optional()
    .describe(
      'JSON: who Slack and email may reach when JWTs are used, `[{"sub": "fin1", "roles": ["approver"], "slack_user": "U0FIN1", "email": "fin1@example.com"}]`. A channel decision takes the roles of this entry (or the `AUTH_TOKENS` one), never a JWT\'s',
    ),
  SLACK_BOT_TOKEN: z.string().min(1).optional().describe("the Slack app's bot token (`xoxb-…`, scope `chat:write`): approval requests are posted to `SLACK_CHANNEL`. Needs `SLACK_SIGNING_SECRET`"),
  SLACK_SIGNING_SECRET: z.string().min(1).optional().describe("the Slack app's signing secret: `POST /integrations/slack/interactivity` refuses a request not signed with it. Needs `SLACK_BOT_TOKEN`"),
  SLACK_CHANNEL: z.string().min(1).optional().describe("the Slack channel id approval requests go to (`C…`); required with `SLACK_BOT_TOKEN`"),
  SLACK_API_URL: z
    .string()
    .url()
    .default("https://slack.com/api/")
    .describe("the Slack Web API base: methods are POSTed to `<SLACK_API_URL><method>` (`@slack/web-api`'s `slackApiUrl`)"),
  PUBLIC_URL: z
    .string()
    .url()
    .optional()
    .describe("the server's address as people reach it (`https://tollgate.example.com`): Slack messages link to the thread's page there; email links need it"),
  SMTP_URL: z
    .string()
    .min(1)
    .optional()
    .describe("the SMTP server approval mails go through: `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://user:pass@host:465` (TLS). Needs `EMAIL_FROM` and `PUBLIC_URL`"),
  EMAIL_FROM: z.string().min(1).optional().describe("the From address of approval mails: `tollgate@example.com` or `Tollgate <tollgate@example.com>`; required with `SMTP_URL`"),
  CHANNEL_MAX_ATTEMPTS: intFrom(12, 1).describe("attempts per Slack or email delivery before it is marked failed (logged, counted) and the thread's next one goes"),
  AUTH_JWKS_URL: z.string().url().optional().describe("JWTs from your identity provider, verified against this JWKS (needs `AUTH_AUDIENCE`)"),
  AUTH_ISSUER: z.string().min(1).optional().describe("a JWT's `iss` must equal this, when set"),
  AUTH_AUDIENCE: z.string().min(1).optional().describe("a JWT's `aud` must include this; required with `AUTH_JWKS_URL`"),
  AUTH_ROLES_CLAIM: z.string().min(1).default("roles").describe("where a JWT keeps its roles; a dotted path (`realm_access.roles`) or a full claim name"),
  AUTH_ROLES: z
    .string()
    .transform((s) => s.split(",").map((r) => r.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "role names are lowercase letters, digits, _ or -")))
    .optional()
    .describe(
      "roles besides `user`, `approver`, `metrics` and `admin` that tokens and JWTs may carry, comma-separated (`finance,legal`): a quorum policy may require one. A token given a role that is neither exits 2",
    ),
  TOLLGATE_INSECURE_NO_AUTH: z.enum(["0", "1"]).default("0").describe("`1` lets the server listen on a non-loopback `HOST` with no auth"),
  ALLOWED_HOSTS: z
    .string()
    .optional()
    .describe(
      "more `Host` names to answer for (comma-separated, any port), besides `localhost`, `127.0.0.1`, `[::1]` and `HOST` itself; behind a proxy, the public name (else `400 invalid_host`)",
    ),
  CORS_ORIGINS: z.string().optional().describe("comma-separated origins allowed to call from a browser on another site; CORS is off without it"),
  RATE_LIMIT_RUNS_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .meta({
      description: "runs + resumes per principal per minute, `0` = off (a value that is set always applies)",
      defaultInWords: "`120` with auth, `0` (off) without",
    }),
  MAX_CONCURRENT_RUNS: intFrom(256, 1).describe("runs in flight in this process; more get `503 overloaded`"),
  REQUEST_TIMEOUT_SECONDS: timerSeconds(30).describe("a request's headers and body must arrive within this (streams already answering are exempt)"),
  MAX_CONNECTIONS: intFrom(4096, 16).describe("open connections; past it the oldest idle or half-open one is closed"),
  APPROVAL_WEBHOOK_URL: z
    .string()
    .url()
    .regex(/^https?:\/\//i, { error: "must be an http:// or https:// URL" })
    // fetch refuses a URL with credentials in it; the secret is what authenticates a delivery.
    .refine((u) => !/^https?:\/\/[^/?#]*@/i.test(u), "must not carry a user name or password")
    .optional()
    .describe(
      "where approval webhooks are POSTed (`http://` or `https://`, see [Webhooks](../operations.md#webhooks)); unset = no webhooks, nothing is enqueued or sent",
    ),
  APPROVAL_WEBHOOK_SECRET: z
    .string()
    .min(16, "must be at least 16 characters")
    .optional()
    .describe(
      "the key each body is signed with (`X-Tollgate-Signature`, 16+ characters); required with the URL: a URL without it refuses to start (exit 2). Scrubbed like every secret",
    ),
  WEBHOOK_MAX_ATTEMPTS: intFrom(12, 1).describe("attempts per delivery before it is marked failed (logged, counted) and the thread's next one goes"),
  WEBHOOK_TIMEOUT_MS: intFrom(10_000, 10).describe("one attempt's deadline: a receiver that has not answered by then counts as a failed attempt"),
  WEBHOOK_BACKOFF_BASE_MS: intFrom(1_000, 1).describe("the delay before retry *n* is `base·2^(n-1)`, capped, with jitter (between half and all of it)"),
  WEBHOOK_BACKOFF_CAP_MS: intFrom(300_000, 1).describe("the longest delay between two attempts"),
  WEBHOOK_SWEEP_MS: intFrom(5_000, 10).describe(
    "how often the outbox is looked at besides right after each approval change (a restart picks up what was pending)",
  ),
  WEBHOOK_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(876_000)
    .default(168)
    .describe(
      "how long a webhook is kept in the outbox after it was delivered or failed, then it is deleted (at most a century); pending ones are never deleted",
    ),
  LOG_LEVEL: z
    .enum(LOG_LEVELS)
    .default("info")
    .describe(
      "log lines below this level are dropped: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent` (see [Logs](../operations.md#logs))",
    ),
  SEALING_KEY: z
    .string()
    .transform((text, ctx) => {
      const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
      if (key.length !== 32) {
        ctx.addIssue({ code: "custom", message: "must be 32 bytes: base64, or 64 hex digits (openssl rand -base64 32)" });
        return z.NEVER;
      }
      return key;
    })
    .optional()
    .meta({
      description:
        "32 bytes (base64, or 64 hex digits; `openssl rand -base64 32`) sealing an edit's sensitive values while its call waits for more approvals, so the database never holds them in clear. Unset on SQLite: `$DATA_DIR/sealing.key` is made once (mode 600). Unset on PostgreSQL: such an edit is refused, `422 unsupported`: give every replica the same key",
      defaultInWords: "a key file beside SQLite's database; none on PostgreSQL",
    }),
  TOLLGATE_GRAPHS: z
    .string()
    .min(1)
    .optional()
    .describe(
      "a `langgraph.json`-format file of your graphs (same as `tollgate --graphs <file>`); unset: the built-in agent (see [Serve your own graph](../guides/your-graph.md))",
    ),
  LANGSMITH_ENDPOINT: z
    .string()
    .optional()
    .meta({
      description: "where traces go (e.g. a self-hosted LangSmith); must be a URL when tracing is on. Also read as `LANGCHAIN_ENDPOINT`",
      defaultInWords: "LangSmith's cloud",
    }),
  LANGSMITH_API_KEY: z.string().optional().describe("sent as `x-api-key`; scrubbed like every other secret. Also read as `LANGCHAIN_API_KEY`"),
  LANGSMITH_PROJECT: z
    .string()
    .optional()
    .meta({ description: "the project runs are filed under. Also read as `LANGCHAIN_PROJECT`", defaultInWords: "LangSmith's `default`" }),
  LANGSMITH_WORKSPACE_ID: z
    .string()
    .optional()
    .describe("for org-scoped keys. Also read as `LANGCHAIN_WORKSPACE_ID`; the `LANGSMITH_` name wins when both are set"),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** `postgres://…` when the store is a shared PostgreSQL; undefined = SQLite in `dataDir`. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  replicaLeaseMs: number;
  /** "demo" for the built-in scripted model, otherwise an OpenAI-compatible model name. */
  model: string;
  openaiApiKey: string | undefined;
  openaiBaseUrl: string | undefined;
  approvalTtlMs: number;
  /** When a waiting call is escalated, for tools that do not say; undefined: never. */
  approvalEscalateMs: number | undefined;
  maxRounds: number;
  modelTimeouts: { firstTokenMs: number; idleMs: number };
  heartbeatMs: number;
  demoTokenDelayMs: number;
  eventRetentionRuns: number;
  expirySweepMs: number;
  /** SEALING_KEY: seals an edit's sensitive values kept while its call waits; undefined: see `SEALING_KEY`. */
  sealingKey: Buffer | undefined;
  /** The graphs file to serve (`--graphs`, TOLLGATE_GRAPHS); undefined = the built-in agent. */
  graphsFile: string | undefined;
  /** Approval webhooks; undefined when APPROVAL_WEBHOOK_URL is unset. */
  webhook: WebhookSettings | undefined;
  /** Who the channels (Slack, email) may reach: AUTH_TOKENS' principals and AUTH_DIRECTORY's. */
  directory: DirectoryEntry[];
  /** PUBLIC_URL without a trailing slash: where people reach the page; undefined: channels link nowhere. */
  publicUrl: string | undefined;
  /** Slack approvals; undefined when SLACK_BOT_TOKEN is unset. */
  slack: SlackSettings | undefined;
  /** Email approvals; undefined when SMTP_URL is unset. */
  email: EmailSettings | undefined;
  /** How channel deliveries are retried (the webhook's timing, CHANNEL_MAX_ATTEMPTS). */
  channelDelivery: Omit<WebhookSettings, "url" | "secret">;
  /** LangSmith tracing asked for (LANGSMITH_TRACING and its aliases = "true"): runs are traced, masked (ops/tracing.ts). */
  logLevel: LogLevel;
  tracing: boolean;
  /** Where traces go (unset: LangSmith's own defaults); read only when `tracing` is on. */
  langsmith: LangSmithSettings;
  auth: AuthSettings;
  limits: Limits;
  /** Values that must never appear in a response, an event, a stored row or a log line. */
  secrets: string[];
}

export interface LangSmithSettings {
  endpoint?: string;
  apiKey?: string;
  project?: string;
  workspaceId?: string;
}

export interface Limits {
  /** Lower-case host names a request's `Host` may name (any port); `/healthz` is exempt. */
  allowedHosts: string[];
  /** Origins allowed cross-site; empty = CORS off. */
  corsOrigins: string[];
  /** 0 = off. */
  runsPerMinute: number;
  maxConcurrentRuns: number;
  requestTimeoutMs: number;
  maxConnections: number;
}

export interface WebhookSettings {
  url: string;
  secret: string;
  maxAttempts: number;
  /** One attempt's deadline: a receiver that stalls longer counts as a failed attempt. */
  timeoutMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** How often pending deliveries are looked for besides the wake-up after each enqueue. */
  sweepMs: number;
  /** How long a finished delivery is kept before it is deleted. */
  retentionMs: number;
}

export interface SlackSettings {
  botToken: string;
  signingSecret: string;
  channel: string;
  apiUrl: string;
}

export interface EmailSettings {
  /** `smtp://user:pass@host:port` or `smtps://…` (TLS from the first byte). */
  smtpUrl: string;
  /** The From header: `tollgate@example.com` or `Tollgate <tollgate@example.com>`. */
  from: string;
  /** PUBLIC_URL without a trailing slash: links are `<publicUrl>/decide/<token>`. */
  publicUrl: string;
}

/** An address alone or `Name <address>`: one @, no spaces or line breaks in the address. */
const MAIL_FROM = /^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/** Email's settings, checked once at start: errors name the variable and never echo the SMTP password. */
function emailSettings(e: { SMTP_URL?: string; EMAIL_FROM?: string; PUBLIC_URL?: string }): EmailSettings | undefined {
  if (!e.SMTP_URL) {
    if (e.EMAIL_FROM) throw new ConfigError("EMAIL_FROM is set but SMTP_URL is not: set SMTP_URL to send approval mails, or unset EMAIL_FROM");
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(e.SMTP_URL);
  } catch {
    throw new ConfigError("SMTP_URL is not a URL: use smtp://user:pass@host:port or smtps://user:pass@host:port");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, not ${url.protocol.slice(0, 16)}//`);
  if (!url.hostname) throw new ConfigError("SMTP_URL names no host: use smtp://user:pass@host:port");
  if (!e.EMAIL_FROM) throw new ConfigError("SMTP_URL needs EMAIL_FROM: the From address of approval mails (tollgate@example.com)");
  if (!MAIL_FROM.test(e.EMAIL_FROM.trim())) throw new ConfigError("EMAIL_FROM is not an address: use tollgate@example.com or 'Tollgate <tollgate@example.com>'");
  // The links in the mails point there: without it, a mail could only carry a link to nowhere.
  if (!e.PUBLIC_URL) throw new ConfigError("SMTP_URL needs PUBLIC_URL: the server's address as approvers reach it, for the links in the mails");
  return { smtpUrl: e.SMTP_URL, from: e.EMAIL_FROM.trim(), publicUrl: e.PUBLIC_URL.replace(/\/+$/, "") };
}

const WILDCARD = /^(0\.0\.0\.0|::|\[::\])$/;
const list = (v: string | undefined) => (v ?? "").split(",").map((x) => x.trim()).filter(Boolean);
/** `[::1]` and `::1` name the same host; the Host header carries the bracketed form. */
const hostName = (h: string) => (h.includes(":") && !h.startsWith("[") ? `[${h}]` : h).toLowerCase();

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/** The variables with which LangChain turns LangSmith tracing on, as @langchain/core reads them. */
const TRACING_ENV = ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"] as const;

/**
 * Every environment variable the server reads, as the docs name it (docs/reference/configuration.md
 * and `.env.example` are checked against this): the schema's, and tracing's switch, read apart under
 * LangChain's aliases too.
 */
export const CONFIG_VARIABLES: readonly string[] = [...Object.keys(envSchema.shape), "LANGSMITH_TRACING"];

const tracingRequested = (env: Record<string, string | undefined>) => TRACING_ENV.some((k) => env[k] === "true");
/** `LANGCHAIN_X` is LangChain's older name for `LANGSMITH_X`; the new name wins, as in LangChain. */
const withLangChainAliases = (env: Record<string, string | undefined>) => {
  const out = { ...env };
  for (const k of ["ENDPOINT", "API_KEY", "PROJECT", "WORKSPACE_ID"]) out[`LANGSMITH_${k}`] ||= env[`LANGCHAIN_${k}`];
  return out;
};

/** Parses the environment once; everything below receives the typed object, never process.env. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // Empty strings (as in a copied .env.example) mean "unset".
  const cleaned = Object.fromEntries(Object.entries(withLangChainAliases(env)).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    // Only the variable's name: a path into AUTH_TOKENS would be a token, which must not be printed.
    const reason = formatIssues(parsed.error.issues, { firstSegmentOnly: true, root: "environment" });
    throw new ConfigError(`invalid configuration: ${reason}`);
  }
  const e = parsed.data;
  const roles = [...ROLES, ...(e.AUTH_ROLES ?? [])];
  for (const [name, entries] of [["AUTH_TOKENS", Object.values(e.AUTH_TOKENS ?? {})], ["AUTH_DIRECTORY", e.AUTH_DIRECTORY ?? []]] as const) {
    for (const principal of entries) {
      const unknown = principal.roles.find((r) => !roles.includes(r));
      // The principal's name, not its token: tokens are never printed.
      if (unknown) throw new ConfigError(`invalid configuration: ${name} gives '${principal.sub}' the role '${unknown.slice(0, 64)}', which is neither a built-in role nor in AUTH_ROLES`);
    }
  }
  // A request's principal is its sub and roles; how channels reach it lives in the directory.
  const tokens = e.AUTH_TOKENS ? new Map<string, Principal>(Object.entries(e.AUTH_TOKENS).map(([t, p]) => [t, { sub: p.sub, roles: p.roles }])) : undefined;
  const directory: DirectoryEntry[] = [...Object.values(e.AUTH_TOKENS ?? {}), ...(e.AUTH_DIRECTORY ?? [])];
  // Half a Slack app would post buttons nobody can press, or take clicks it cannot answer.
  if (!!e.SLACK_BOT_TOKEN !== !!e.SLACK_SIGNING_SECRET) {
    throw new ConfigError("SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET go together: the token posts requests, the secret verifies the clicks");
  }
  if (e.SLACK_BOT_TOKEN && !e.SLACK_CHANNEL) throw new ConfigError("SLACK_BOT_TOKEN needs SLACK_CHANNEL: the channel id approval requests go to");
  const slack: SlackSettings | undefined = e.SLACK_BOT_TOKEN
    ? { botToken: e.SLACK_BOT_TOKEN, signingSecret: e.SLACK_SIGNING_SECRET!, channel: e.SLACK_CHANNEL!, apiUrl: e.SLACK_API_URL.replace(/\/?$/, "/") }
    : undefined;
  const email = emailSettings(e);
  const auth: AuthSettings = {
    ...(tokens?.size ? { tokens } : {}),
    ...(e.AUTH_JWKS_URL
      ? { jwt: { jwksUrl: e.AUTH_JWKS_URL, issuer: e.AUTH_ISSUER, audience: e.AUTH_AUDIENCE, rolesClaim: e.AUTH_ROLES_CLAIM, roles } }
      : {}),
  };
  // A provider's keys sign tokens for all its apps: without an audience, a token minted for
  // another app (maybe with its own "admin" role) would be accepted here.
  if (e.AUTH_JWKS_URL && !e.AUTH_AUDIENCE) {
    throw new ConfigError("AUTH_JWKS_URL needs AUTH_AUDIENCE: the audience your identity provider puts in tokens meant for tollgate");
  }
  // Without auth, anyone who reaches the port may approve anything: only this machine may.
  if (!auth.tokens && !auth.jwt && !LOOPBACK.test(e.HOST) && e.TOLLGATE_INSECURE_NO_AUTH !== "1") {
    throw new ConfigError(
      `HOST=${e.HOST} is not a loopback address and no auth is configured: set AUTH_TOKENS or AUTH_JWKS_URL (or TOLLGATE_INSECURE_NO_AUTH=1 to serve it open)`,
    );
  }
  // An unsigned webhook would let anyone who can reach the receiver forge approval notices.
  if (e.APPROVAL_WEBHOOK_URL && !e.APPROVAL_WEBHOOK_SECRET) {
    throw new ConfigError("APPROVAL_WEBHOOK_URL needs APPROVAL_WEBHOOK_SECRET: the key your receiver verifies X-Tollgate-Signature with");
  }
  const webhook: WebhookSettings | undefined = e.APPROVAL_WEBHOOK_URL
    ? {
        url: e.APPROVAL_WEBHOOK_URL,
        secret: e.APPROVAL_WEBHOOK_SECRET!,
        maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
        timeoutMs: e.WEBHOOK_TIMEOUT_MS,
        backoffBaseMs: e.WEBHOOK_BACKOFF_BASE_MS,
        backoffCapMs: Math.max(e.WEBHOOK_BACKOFF_CAP_MS, e.WEBHOOK_BACKOFF_BASE_MS),
        sweepMs: e.WEBHOOK_SWEEP_MS,
        retentionMs: e.WEBHOOK_RETENTION_HOURS * 3_600_000,
      }
    : undefined;
  const model = e.MODEL ?? (e.OPENAI_API_KEY ? "gpt-4o-mini" : "demo");
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    replicaLeaseMs: Math.round(e.REPLICA_LEASE_SECONDS * 1000),
    model,
    openaiApiKey: e.OPENAI_API_KEY,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    approvalTtlMs: Math.round(e.APPROVAL_TTL_SECONDS * 1000),
    approvalEscalateMs: e.APPROVAL_ESCALATE_SECONDS === undefined ? undefined : Math.round(e.APPROVAL_ESCALATE_SECONDS * 1000),
    maxRounds: e.MAX_ROUNDS,
    modelTimeouts: {
      firstTokenMs: Math.round(e.MODEL_FIRST_TOKEN_TIMEOUT_SECONDS * 1000),
      idleMs: Math.round(e.MODEL_IDLE_TIMEOUT_SECONDS * 1000),
    },
    heartbeatMs: Math.round(e.HEARTBEAT_SECONDS * 1000),
    demoTokenDelayMs: e.DEMO_TOKEN_DELAY_MS,
    eventRetentionRuns: e.EVENT_RETENTION_RUNS,
    expirySweepMs: e.EXPIRY_SWEEP_MS,
    sealingKey: e.SEALING_KEY,
    graphsFile: e.TOLLGATE_GRAPHS,
    webhook,
    directory,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ""),
    slack,
    email,
    channelDelivery: {
      maxAttempts: e.CHANNEL_MAX_ATTEMPTS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      backoffBaseMs: e.WEBHOOK_BACKOFF_BASE_MS,
      backoffCapMs: Math.max(e.WEBHOOK_BACKOFF_CAP_MS, e.WEBHOOK_BACKOFF_BASE_MS),
      sweepMs: e.WEBHOOK_SWEEP_MS,
      retentionMs: e.WEBHOOK_RETENTION_HOURS * 3_600_000,
    },
    logLevel: e.LOG_LEVEL,
    tracing: tracingRequested(env),
    langsmith: { endpoint: e.LANGSMITH_ENDPOINT, apiKey: e.LANGSMITH_API_KEY, project: e.LANGSMITH_PROJECT, workspaceId: e.LANGSMITH_WORKSPACE_ID },
    auth,
    limits: {
      allowedHosts: [
        ...new Set(["localhost", "127.0.0.1", "[::1]", ...(WILDCARD.test(e.HOST) ? [] : [e.HOST]), ...list(e.ALLOWED_HOSTS)].map(hostName)),
      ],
      corsOrigins: list(e.CORS_ORIGINS).map((o) => o.replace(/\/+$/, "")),
      runsPerMinute: e.RATE_LIMIT_RUNS_PER_MINUTE ?? (auth.tokens || auth.jwt ? 120 : 0),
      maxConcurrentRuns: e.MAX_CONCURRENT_RUNS,
      requestTimeoutMs: Math.round(e.REQUEST_TIMEOUT_SECONDS * 1000),
      maxConnections: e.MAX_CONNECTIONS,
    },
    secrets: [e.OPENAI_API_KEY, e.LANGSMITH_API_KEY, e.SEALING_KEY?.toString("base64"), e.SEALING_KEY?.toString("hex"), urlPassword(e.DATABASE_URL), e.APPROVAL_WEBHOOK_SECRET, e.SLACK_BOT_TOKEN, e.SLACK_SIGNING_SECRET, urlPassword(e.SMTP_URL), ...(tokens?.keys() ?? [])].filter(
      (v): v is string => v !== undefined && v !== "",
    ),
  };
}

/** The password in a URL (database, SMTP): drivers echo the URL in some errors. */
function urlPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}
