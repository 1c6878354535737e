import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** How a run ended, as `tollgate_runs_total{outcome}` names it. */
export const RUN_OUTCOMES = ["completed", "interrupted", "max_rounds", "cancelled", "error"] as const;
/** How a pending call was decided, as the audit trail names it (`tollgate_approvals_total{decision}`). */
export const APPROVAL_DECISIONS = ["approved", "edited", "rejected", "no_decision", "expired", "cancelled"] as const;
/** The face a decision came through; `system` for closings no one decided through a face (expiry, cancel). */
export const APPROVAL_VIAS = ["api", "langgraph", "slack", "email", "system"] as const;
export const MODEL_ERROR_CODES = ["model_error", "model_timeout"] as const;
/** A run started by a user message, or by a decision on an interrupt. */
export type RunKind = "message" | "resume";

/** What the gauges read at scrape time, so they are right whatever happened in between. */
export interface GaugeSources {
  /** Runs in flight in this process. */
  activeRuns(): number;
  /** Interrupts open for decisions in the store (every replica's). */
  pendingApprovals(): Promise<number>;
}

/** One run's token events: the run log calls `token()` for each. */
export interface RunMeter {
  token(): void;
}

export interface MetricsOptions {
  /** Also Node's process metrics and event-loop lag (`process_*`, `nodejs_*`). Off by default: they watch the whole process. */
  processMetrics?: boolean;
}

// Seconds. The contract promises a cancel within 100 ms; a model answers in a second or so; an
// approval waits minutes, up to APPROVAL_TTL_SECONDS (default 900).
const FIRST_TOKEN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];
const APPROVAL_WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
const CANCEL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * tollgate's Prometheus metrics, on a registry of its own (never prom-client's global one: a
 * process may hold several tollgates, and each scrape must show one). The run machinery reports
 * into it at a handful of points; `/metrics` renders it.
 */
export const WEBHOOK_OUTCOMES = ["delivered", "retry", "failed"] as const;
/** What became of a channel's delivery attempt; `forged`: an inbound request refused for its signature. */
export const CHANNEL_OUTCOMES = ["delivered", "retry", "failed", "forged"] as const;

export class Metrics {
  readonly registry = new Registry();
  /** Token events counted since start; the counter reads it at scrape time (see `runStarted`). */
  private tokens = 0;
  private readonly runs: Counter<"outcome">;
  private readonly approvals: Counter<"decision" | "via">;
  private readonly channelDeliveries: Counter<"channel" | "outcome">;
  private readonly approvalWait: Histogram;
  private readonly modelErrors: Counter<"code">;
  private readonly cancelLatency: Histogram;
  private readonly webhooks: Counter<"outcome">;
  private readonly gateRefusals: Counter<"tool">;
  private readonly escalations: Counter;
  private readonly partialApprovals: Counter;
  private readonly firstToken: Record<RunKind, { observe(seconds: number): void }>;
  private sources: GaugeSources | undefined;

  constructor(o: MetricsOptions = {}) {
    const registers = [this.registry];
    const metrics = this;
    this.runs = new Counter({ name: "tollgate_runs_total", help: "Runs ended in this process, by outcome", labelNames: ["outcome"], registers });
    new Gauge({
      name: "tollgate_active_runs",
      help: "Runs in flight in this process",
      registers,
      collect() {
        this.set(metrics.sources?.activeRuns() ?? 0);
      },
    });
    const firstToken = new Histogram({
      name: "tollgate_time_to_first_token_seconds",
      help: "From a run's start (its claim committed) to its first token event; kind: message or resume",
      labelNames: ["kind"],
      buckets: FIRST_TOKEN_BUCKETS,
      registers,
    });
    for (const kind of ["message", "resume"]) firstToken.zero({ kind });
    this.firstToken = { message: firstToken.labels("message"), resume: firstToken.labels("resume") };
    let reported = 0;
    new Counter({
      name: "tollgate_token_events_total",
      help: "Token events streamed by runs in this process",
      registers,
      // A token costs one integer increment; the counter catches up when scraped.
      collect() {
        this.inc(metrics.tokens - reported);
        reported = metrics.tokens;
      },
    });
    this.approvals = new Counter({
      name: "tollgate_approvals_total",
      help: "Pending calls decided, by decision (as the audit trail names it) and the face it came through (system: expiry, cancel)",
      labelNames: ["decision", "via"],
      registers,
    });
    this.approvalWait = new Histogram({
      name: "tollgate_approval_wait_seconds",
      help: "For each decided call, from its interrupt opening to the decision (approve, edit, reject, expiry, cancel)",
      buckets: APPROVAL_WAIT_BUCKETS,
      registers,
    });
    new Gauge({
      name: "tollgate_pending_approvals",
      help: "Interrupts open for decisions, read from the store at scrape time (all replicas)",
      registers,
      async collect() {
        try {
          this.set((await metrics.sources?.pendingApprovals()) ?? 0);
        } catch {
          // The database is unreachable: keep the last value rather than fail the whole scrape.
        }
      },
    });
    this.modelErrors = new Counter({
      name: "tollgate_model_errors_total",
      help: "Runs ended by a failed model call, by error code",
      labelNames: ["code"],
      registers,
    });
    this.cancelLatency = new Histogram({
      name: "tollgate_cancel_latency_seconds",
      help: "From a cancel reaching this process (request, client gone, shutdown) to its run ending cancelled",
      buckets: CANCEL_BUCKETS,
      registers,
    });
    this.webhooks = new Counter({
      name: "tollgate_webhook_deliveries_total",
      help: "Approval webhook attempts, by outcome: delivered, retry (failed, tried again later), failed (gave up)",
      labelNames: ["outcome"],
      registers,
    });
    for (const outcome of WEBHOOK_OUTCOMES) this.webhooks.inc({ outcome }, 0);
    this.channelDeliveries = new Counter({
      name: "tollgate_channel_deliveries_total",
      help: "Slack and email delivery attempts by channel and outcome (delivered, retry, failed), and inbound requests refused for their signature (forged)",
      labelNames: ["channel", "outcome"],
      registers,
    });
    this.gateRefusals = new Counter({
      name: "tollgate_gate_refusals_total",
      help: "Irreversible tool calls refused by the tool itself for want of a live approval (a graph that went round its gate), by tool",
      labelNames: ["tool"],
      registers,
    });
    this.escalations = new Counter({
      name: "tollgate_approvals_escalated_total",
      help: "Interrupts still waiting at their escalation time, escalated (one approval.escalated each)",
      registers,
    });
    this.partialApprovals = new Counter({
      name: "tollgate_partial_approvals_total",
      help: "Approvals taken call by call in interrupts that need a quorum (each approver counts once)",
      registers,
    });
    // Every known label value shows from the start (at 0): a rate over a series that appears late misses its first step.
    for (const outcome of RUN_OUTCOMES) this.runs.inc({ outcome }, 0);
    for (const decision of APPROVAL_DECISIONS) for (const via of APPROVAL_VIAS) this.approvals.inc({ decision, via }, 0);
    for (const code of MODEL_ERROR_CODES) this.modelErrors.inc({ code }, 0);
    if (o.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the gauges read their values (set once the run machinery exists). */
  watch(sources: GaugeSources): void {
    this.sources = sources;
  }

  /** A run began; its meter counts its tokens and times the first. */
  runStarted(kind: RunKind): RunMeter {
    const startedAt = performance.now();
    const firstToken = this.firstToken[kind];
    let first = true;
    return {
      token: () => {
        this.tokens++;
        if (first) {
          first = false;
          firstToken.observe((performance.now() - startedAt) / 1000);
        }
      },
    };
  }

  runEnded(outcome: string): void {
    this.runs.inc({ outcome });
  }

  /** The pending calls of one interrupt were decided (each call's decision), `waitMs` after it opened. */
  decided(decisions: readonly string[], waitMs: number, via: (typeof APPROVAL_VIAS)[number] = "system"): void {
    const seconds = Math.max(0, waitMs) / 1000;
    for (const decision of decisions) {
      this.approvals.inc({ decision, via });
      this.approvalWait.observe(seconds);
    }
  }

  /** Approvals taken call by call (a quorum's). */
  approvedPartially(n: number): void {
    this.partialApprovals.inc(n);
  }

  /** An interrupt still waiting was escalated. */
  escalated(): void {
    this.escalations.inc();
  }

  /** An irreversible tool refused to run: no live approval for the call. */
  gateRefused(tool: string): void {
    this.gateRefusals.inc({ tool });
  }

  modelError(code: string): void {
    this.modelErrors.inc({ code });
  }

  /** A run ended `cancelled`, `ms` after the cancel reached this process. */
  cancelled(ms: number): void {
    this.cancelLatency.observe(Math.max(0, ms) / 1000);
  }

  /** One approval webhook attempt ended (see WebhookDispatcher). */
  webhookAttempt(outcome: (typeof WEBHOOK_OUTCOMES)[number]): void {
    this.webhooks.inc({ outcome });
  }

  /** One channel delivery attempt ended, or an inbound request was refused (`forged`). */
  channelDelivery(channel: string, outcome: (typeof CHANNEL_OUTCOMES)[number]): void {
    this.channelDeliveries.inc({ channel, outcome });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every series. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}

/** A meter that counts nothing, for runs outside any tollgate (tests). */
export const NO_METER: RunMeter = { token() {} };
