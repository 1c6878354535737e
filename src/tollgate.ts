import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type Clock, systemClock } from "./clock.js";
import { type Config, ConfigError, type EmailSettings } from "./config.js";
import { jsonLogger, type Logger } from "./logger.js";
import { chatModelName, createModel } from "./model/index.js";
import { createSecretScrubber, createTracing, keySealer, NO_SEALER, sealingKeyFile, type Tracing, Metrics, NO_TRACING, scrubbingLogger, type SecretScrubber, skipIdleRunTrees, WebhookDispatcher, type WebhookOutcome, type DeliverySender } from "./ops/index.js";
import { Access, createAuthenticator, Directory } from "./auth/index.js";
import { createSlackFace, SLACK_LANE } from "./faces/slack/index.js";
import { createEmailFace, EMAIL_LANE, emailChannel, smtpMailer } from "./faces/email/index.js";
import { type AgentFactory, discoverTools, GraphCatalog, loadGraphsFile, resolveGraphs, servedGraph, type ServedGraph } from "./graph/index.js";
import { createRunContext, ExpiryCloser, LeaseKeeper, RunAdmission, RunService, ThreadService } from "./runs/index.js";
import { createApp } from "./faces/api/index.js";
import { LANGGRAPH_OPENAPI, langGraphApi, langGraphMeta, protocolUpgrade } from "./faces/langgraph/index.js";
import { type AnyStore, openStore, PgDecisionTokenStore, SqliteDecisionTokenStore, storeLocation, type StoreLocation } from "./store/index.js";
import { createDemoToolsOn, type DemoTables, setupDemoTables, sqliteDemoTables, ToolRegistry, type TollgateTool, type ToolMeta } from "./tools/index.js";
import { refuseStudioGates } from "./tools/studio-gate.js";
import { withoutHints } from "./tools/without-hints.js";

/** How long a dead email link is kept (for the 410 page's words) before it is deleted. */
const TOKEN_KEEP_MS = 24 * 3_600_000;

/** What `/langgraph/info` reports as the server's version. */
const TOLLGATE_VERSION = "0.1.0";

export interface TollgateOptions {
  config: Config;
  /** Where log lines go; default JSON lines on stdout at `config.logLevel`. Scrubbed of secrets either way. */
  log?: Logger;
  /** Your own model; defaults to what `config.model` names. */
  model?: BaseChatModel;
  /**
   * Your own tools, for the built-in agent; defaults to the order-support demo tools. With
   * `graphs`, tools your graphs hold are found in them (kit nodes, ToolNodes, subgraphs added as
   * nodes); name here any they reach some other way, so their metadata is known.
   */
  tools?: (store: AnyStore) => TollgateTool[] | Promise<TollgateTool[]>;
  /**
   * The agent served as `agent` when no graphs are given, built on `model` and `tools`. The
   * `tollgate` command and the package's `createTollgate` hand in the built-in one.
   */
  agent?: AgentFactory;
  /**
   * Your own graphs, by graph id: a StateGraph, a compiled graph, what LangChain's `createAgent`
   * returns, or a function returning one. Each is served on tollgate's checkpointer. Default
   * `config.graphsFile` (`--graphs`), else the built-in agent as `agent`.
   */
  graphs?: Record<string, unknown>;
  /**
   * tollgate's metadata for plain LangChain tools your graphs hold, by tool name (`kind`,
   * `sensitive`, `sensitiveOutput`, `policy`, `editable`): each is served as if made with
   * `defineTool` (a ToolNode's copy is swapped for the gated one, so an irreversible one holds
   * the gate itself).
   */
  toolMeta?: Record<string, ToolMeta>;
  /**
   * Whether a tool given no kind (by `toolMeta` or `defineTool`) takes it from its MCP hints:
   * `read` for `readOnlyHint: true`, else `irreversible`. Default true. `false`: every such tool
   * waits at the gate, for a server not trusted to describe its own tools.
   */
  mcpHints?: boolean;
  /**
   * The system message the built-in agent sends first on every model call; defaults to the
   * demo's order-support prompt, which suits only the demo tools. `""` sends none.
   */
  systemPrompt?: string;
  /** Told the outcome of each approval webhook attempt (for counters). */
  onWebhookOutcome?: (outcome: WebhookOutcome) => void;
  /** Where "now" comes from (approval deadlines, timestamps); the system clock by default. Tests move a fake one. */
  clock?: Clock;
  /**
   * Whether `/metrics` also shows Node's process metrics and event-loop lag (default true). Off
   * when you run several tollgates in one process, or collect those yourself.
   */
  processMetrics?: boolean;
}

export interface Tollgate {
  app: ReturnType<typeof createApp>;
  store: AnyStore;
  runs: RunService;
  expiry: ExpiryCloser;
  /** The logger everything here writes to: the one given, with every line scrubbed of secrets. */
  log: Logger;
  /** Scrubs `config.secrets` and credential-shaped strings from text on its way out. */
  scrubber: SecretScrubber;
  /** What `GET /metrics` shows. */
  metrics: Metrics;
  /** What it serves with, as the `ready` log line names it: the model in use and where the store is (no password). */
  serving: { model: string; store: StoreLocation };
  /** Cancels runs in flight (reason `shutdown`), stops timers, closes the database. */
  close(): Promise<void>;
  /** The HTTP server's `upgrade` handler: the thread-centric protocol's WebSocket at `/langgraph`. */
  upgrade: ReturnType<typeof protocolUpgrade>;
}

/**
 * Wires config → store → graph → runs → HTTP app, and recovers what a previous process left
 * in flight before anything is served. `main.ts` adds the socket and signal handling.
 */
export async function createTollgate(o: TollgateOptions): Promise<Tollgate> {
  const { config } = o;
  refuseStudioGates();
  const clock = o.clock ?? systemClock;
  // Every line anything here logs is scrubbed of the configured secrets (and credential-shaped
  // strings) first: upstream errors echo API keys and bearer tokens.
  const scrubber = createSecretScrubber(config.secrets);
  const log = scrubbingLogger(o.log ?? jsonLogger({ level: config.logLevel }), scrubber);
  if (!config.tracing) skipIdleRunTrees();
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    poolMax: config.databasePoolSize,
    onError: (msg, err) => log.warn(msg, { message: err instanceof Error ? err.message : String(err) }),
    clock,
    // What LangGraph and the ledger store is scrubbed too: a database file or backup is an exit.
    scrub: scrubber,
  });
  const model = o.model ?? createModel({
    model: config.model,
    openaiApiKey: config.openaiApiKey,
    openaiBaseUrl: config.openaiBaseUrl,
    demoTokenDelayMs: config.demoTokenDelayMs,
  });
  const team = o.graphs ? { graphs: o.graphs, descriptions: {} } : config.graphsFile ? await graphsFromFile(config.graphsFile) : undefined;
  const specs = team
    ? await resolveGraphs(team.graphs, {
        checkpointer: store.checkpointer,
        warn: (msg, fields) => log.warn(msg, fields),
        descriptions: team.descriptions,
      })
    : [];
  // The built-in agent's tools only when it is served (or named): a team's graph brings its own.
  if (!team && !o.agent) {
    await store.close();
    throw new ConfigError("Nothing to serve: give graphs (createTollgate({ graphs }), --graphs) or an agent");
  }
  const hints = o.mcpHints ?? true;
  const given = o.tools ? await o.tools(store) : team ? [] : createDemoToolsOn(await demoTablesOf(store));
  const own = hints ? given : given.map(withoutHints);
  const found = specs.flatMap((s) => discoverTools(s.graph, { toolMeta: o.toolMeta, mcpHints: hints }));
  // A graph's own copy of a tool cannot be swapped for a gated one: refused, so it never runs unasked.
  const trusting = hints ? undefined : found.find((t) => withoutHints(t) !== t);
  if (trusting) {
    await store.close();
    throw new ConfigError(`Tool '${trusting.name}' is read-only only by its MCP hint, which mcpHints: false does not trust: give it a kind in defineTool, or name the plain tool in toolMeta`);
  }
  for (const name of Object.keys(o.toolMeta ?? {})) {
    if (!found.some((t) => t.name === name)) log.warn(`toolMeta names '${name}', which no served graph holds in a ToolNode`, { tool: name });
  }
  const registry = new ToolRegistry(uniqueTools([...own, ...found]));
  // Off: no LangSmith client is made, so nothing can leave for it.
  const tracing = config.tracing ? createTracing({ settings: config.langsmith, registry, scrubber, log }) : NO_TRACING;
  const served: ServedGraph[] = team
    ? specs.map((s) => servedGraph({ id: s.graphId, description: s.description, graph: tracing.traced(s.graph as never), registry }))
    : [agentServed(o.agent!, { model, tools: own, systemPrompt: o.systemPrompt, ledger: store.ledger, maxRounds: config.maxRounds, modelTimeouts: config.modelTimeouts, checkpointer: store.checkpointer, registry }, tracing)];
  const auth = createAuthenticator(config.auth, log);
  const access = new Access(auth.enabled);
  const directory = new Directory(config.directory);
  const email = config.email ? await openEmail(config.email, { store, log, clock }) : undefined;
  const slackChannel = config.slack ? [{ lane: SLACK_LANE }] : [];
  const emailLane = email ? [emailChannel({ directory, access })] : [];
  const metrics = new Metrics({ processMetrics: o.processMetrics ?? true });
  const ctx = createRunContext({
    graphs: new GraphCatalog(served),
    store,
    registry,
    settings: { approvalTtlMs: config.approvalTtlMs, approvalEscalateMs: config.approvalEscalateMs, maxRounds: config.maxRounds, eventRetentionRuns: config.eventRetentionRuns, webhooks: !!config.webhook, channels: [...slackChannel, ...emailLane] },
    log,
    access,
    scrubber,
    clock,
    metrics,
    // A key the database does not hold: given, or (one SQLite file) kept beside it; replicas
    // sharing PostgreSQL without one refuse what would need it rather than store it in clear.
    sealer: config.sealingKey ? keySealer(config.sealingKey) : store.kind === "sqlite" ? keySealer(sealingKeyFile(config.dataDir)) : NO_SEALER,
  });
  metrics.watch({
    activeRuns: () => ctx.inFlight.active.size,
    // From the store, not counted here: right across restarts and replicas.
    // Bounded: a database that does not answer must not hold the whole scrape (the gauge then
    // keeps its last value).
    pendingApprovals: () => withDeadline(store.interrupts.countOpen(clock.now()), GAUGE_READ_DEADLINE_MS),
  });
  // This replica's lease first, then what dead ones left, before anything is served.
  const leases = new LeaseKeeper(ctx, config.replicaLeaseMs);
  const recovered = await leases.start();
  if (recovered) log.warn(`closed ${recovered} run(s) left in flight by a process that is gone`);
  const { limits } = config;
  const runs = new RunService(ctx, new RunAdmission({ perMinute: limits.runsPerMinute, maxConcurrent: limits.maxConcurrentRuns, inFlight: () => ctx.inFlight.active.size, now: () => clock.now() }));
  const expiry = new ExpiryCloser(ctx, config.expirySweepMs);
  expiry.start();
  // Approval webhooks only when configured: without a URL nothing is enqueued or sent.
  const webhooks = config.webhook
    ? new WebhookDispatcher({
        ...config.webhook,
        outbox: store.webhooks,
        log,
        now: () => clock.now(),
        onOutcome: (outcome) => {
          metrics.webhookAttempt(outcome);
          o.onWebhookOutcome?.(outcome);
        },
      })
    : undefined;
  webhooks?.start();
  const threads = new ThreadService(ctx);
  // Slack only when configured: its own outbox lane, so a dead webhook holds no message back.
  const slack = config.slack
    ? createSlackFace({ slack: config.slack, timeoutMs: config.channelDelivery.timeoutMs, directory, runs, threads, access, log, metrics, now: () => clock.now(), pageUrl: config.publicUrl })
    : undefined;
  /** A channel's lane drained on the channel delivery settings, its outcomes counted under its name. */
  const laneDispatcher = (channel: string, send: DeliverySender) => {
    const d = new WebhookDispatcher({
      ...config.channelDelivery,
      outbox: store.webhooks,
      lane: channel,
      send,
      log: log.child({ channel }),
      now: () => clock.now(),
      onOutcome: (outcome) => metrics.channelDelivery(channel, outcome),
    });
    d.start();
    return d;
  };
  const slackDelivery = slack ? laneDispatcher(slack.lane, slack.send) : undefined;
  // Email only when configured: mails in their own lane, links at /decide.
  const emailFace = email
    ? createEmailFace({ publicUrl: email.settings.publicUrl, tokens: email.tokens, mailer: email.mailer, directory, runs, threads, access, log, now: () => clock.now() })
    : undefined;
  const emailDelivery = emailFace ? laneDispatcher(EMAIL_LANE, emailFace.send) : undefined;
  const appDeps = {
    runs,
    threads,
    auth,
    access,
    edge: { allowedHosts: limits.allowedHosts, corsOrigins: limits.corsOrigins },
    scrub: (text: string) => scrubber.scrub(text),
    log,
    metrics,
    heartbeatMs: config.heartbeatMs,
    databaseReadable: () => store.readable(),
    ...(slack ? { integrations: slack.routes } : {}),
    ...(emailFace ? { decide: emailFace.routes } : {}),
  };
  const app = createApp({ ...appDeps, langgraph: { meta: langGraphMeta(TOLLGATE_VERSION), api: langGraphApi(appDeps), openapi: LANGGRAPH_OPENAPI } });
  return {
    app,
    upgrade: protocolUpgrade({ fetch: app.fetch, log }),
    store,
    runs,
    expiry,
    log,
    scrubber,
    metrics,
    // The model tollgate made is the one config.model names; a team's own names itself.
    serving: { model: o.model ? chatModelName(o.model) : config.model, store: storeLocation(config) },
    async close() {
      await runs.shutdown();
      await expiry.stop();
      await webhooks?.stop();
      await slackDelivery?.stop();
      await emailDelivery?.stop();
      email?.close();
      await leases.stop();
      await tracing.flush(); // what the last runs traced, before the process goes
      await store.close();
    },
  };
}

/** Email's own parts: the decision tokens in the store's database, and the SMTP client. */
async function openEmail(settings: EmailSettings, o: { store: AnyStore; log: Logger; clock: Clock }) {
  const { store } = o;
  // On the server's own connection, so statements wait for the store's transactions.
  const tokens = store.kind === "sqlite" ? new SqliteDecisionTokenStore(store.db, (work) => store.gate(work)) : new PgDecisionTokenStore(store.pool);
  await tokens.init();
  // Links dead for a day are of no use to anyone: kept that long for the 410 page's words.
  const prune = () => tokens.prune(o.clock.now() - TOKEN_KEEP_MS).catch((err: unknown) => o.log.warn("email tokens not pruned", { message: (err as Error).message }));
  await prune();
  const timer = setInterval(prune, TOKEN_KEEP_MS / 24).unref();
  const mailer = smtpMailer({ smtpUrl: settings.smtpUrl, from: settings.from });
  return {
    settings,
    tokens,
    mailer,
    close() {
      clearInterval(timer);
      mailer.close();
    },
  };
}

/** The agent as built, traced like any served graph. */
function agentServed(agent: AgentFactory, inputs: Parameters<AgentFactory>[0], tracing: Tracing): ServedGraph {
  const served = agent(inputs);
  return { ...served, graph: tracing.traced(served.graph as never) };
}

/** The demo tools' tables on the store's own database (the default tools of an agent given none). */
export async function demoTablesOf(store: AnyStore): Promise<DemoTables> {
  let tables: DemoTables;
  if (store.kind === "sqlite") {
    setupDemoTables(store.db);
    tables = sqliteDemoTables(store.db, (work) => store.gate(work));
  } else {
    const { postgresDemoTables } = await import("./tools/demo/pg-demo-tables.js");
    const { withTransaction } = await import("./store/postgres/index.js");
    tables = await postgresDemoTables(store.pool, (fn) => withTransaction(store.pool, fn));
  }
  return tables;
}

/** The graphs of a langgraph.json-format file, with their descriptions. */
async function graphsFromFile(file: string): Promise<{ graphs: Record<string, unknown>; descriptions: Record<string, string | null> }> {
  const entries = await loadGraphsFile(file);
  return {
    graphs: Object.fromEntries(Object.entries(entries).map(([id, e]) => [id, e.value])),
    descriptions: Object.fromEntries(Object.entries(entries).map(([id, e]) => [id, e.description])),
  };
}

/** One tool per name: the same tool found twice is one; two different tools under one name are refused. */
function uniqueTools(tools: TollgateTool[]): TollgateTool[] {
  const byName = new Map<string, TollgateTool>();
  for (const t of tools) {
    const had = byName.get(t.name);
    if (had && had !== t && JSON.stringify(had.meta) !== JSON.stringify(t.meta)) {
      throw new Error(`Two tools named '${t.name}' with different metadata: one name, one tool`);
    }
    if (!had) byName.set(t.name, t);
  }
  return [...byName.values()];
}

/** How long a scrape waits for the store's count of open interrupts. */
const GAUGE_READ_DEADLINE_MS = 1000;

/** `p`, or a rejection once `ms` have passed. */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
