import { describe, expect, it } from "vitest";
import { Metrics } from "../../../src/ops/index.js";

/** The value of one sample in a Prometheus text exposition; undefined when the line is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(",") : [];
    if (have.length === want.length && want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

describe("Metrics", () => {
  it("shows every tollgate series from the start, each known label value at 0", async () => {
    const text = await new Metrics().render();
    for (const outcome of ["completed", "interrupted", "max_rounds", "cancelled", "error"]) expect(sample(text, "tollgate_runs_total", { outcome })).toBe(0);
    for (const decision of ["approved", "edited", "rejected", "no_decision", "expired", "cancelled"]) {
      for (const via of ["api", "langgraph", "slack", "email", "system"]) expect(sample(text, "tollgate_approvals_total", { decision, via })).toBe(0);
    }
    for (const code of ["model_error", "model_timeout"]) expect(sample(text, "tollgate_model_errors_total", { code })).toBe(0);
    expect(sample(text, "tollgate_active_runs")).toBe(0);
    expect(sample(text, "tollgate_pending_approvals")).toBe(0);
    expect(sample(text, "tollgate_token_events_total")).toBe(0);
    expect(sample(text, "tollgate_approval_wait_seconds_count")).toBe(0);
    expect(sample(text, "tollgate_cancel_latency_seconds_count")).toBe(0);
    expect(sample(text, "tollgate_time_to_first_token_seconds_count", { kind: "message" })).toBe(0);
    expect(sample(text, "tollgate_time_to_first_token_seconds_count", { kind: "resume" })).toBe(0);
    // Process metrics only when asked for.
    expect(text).not.toContain("process_cpu_user_seconds_total");
  });

  it("with processMetrics, Node's process metrics and event-loop lag, unprefixed", async () => {
    const metrics = new Metrics({ processMetrics: true });
    // prom-client counts CPU from the registry's creation: spend some, so there is some to count
    // (a render right after creation could read 0 on a fast machine).
    const start = process.cpuUsage().user;
    while (process.cpuUsage().user - start < 5_000);
    const text = await metrics.render();
    expect(sample(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \S+$/m);
  });

  it("each instance has its own registry: two in one process count apart", async () => {
    const a = new Metrics({ processMetrics: true });
    const b = new Metrics({ processMetrics: true });
    a.runEnded("completed");
    a.runEnded("completed");
    b.runEnded("error");
    expect(sample(await a.render(), "tollgate_runs_total", { outcome: "completed" })).toBe(2);
    expect(sample(await a.render(), "tollgate_runs_total", { outcome: "error" })).toBe(0);
    expect(sample(await b.render(), "tollgate_runs_total", { outcome: "completed" })).toBe(0);
    expect(sample(await b.render(), "tollgate_runs_total", { outcome: "error" })).toBe(1);
  });

  it("counts every token and times only each run's first, by kind", async () => {
    const m = new Metrics();
    const one = m.runStarted("message");
    for (let i = 0; i < 5; i++) one.token();
    const two = m.runStarted("resume");
    two.token();
    two.token();
    m.runStarted("message"); // no token at all: nothing to time
    let text = await m.render();
    expect(sample(text, "tollgate_token_events_total")).toBe(7);
    expect(sample(text, "tollgate_time_to_first_token_seconds_count", { kind: "message" })).toBe(1);
    expect(sample(text, "tollgate_time_to_first_token_seconds_count", { kind: "resume" })).toBe(1);
    // The counter keeps counting across scrapes (it catches up on each one, never twice).
    one.token();
    text = await m.render();
    expect(sample(text, "tollgate_token_events_total")).toBe(8);
    expect(sample(await m.render(), "tollgate_token_events_total")).toBe(8);
  });

  it("decisions: one count per call by decision, and each call's wait from its interrupt", async () => {
    const m = new Metrics();
    m.decided(["approved", "rejected"], 3000, "slack");
    m.decided(["expired"], 900_000);
    const text = await m.render();
    expect(sample(text, "tollgate_approvals_total", { decision: "approved", via: "slack" })).toBe(1);
    expect(sample(text, "tollgate_approvals_total", { decision: "rejected", via: "slack" })).toBe(1);
    expect(sample(text, "tollgate_approvals_total", { decision: "expired", via: "system" })).toBe(1);
    expect(sample(text, "tollgate_approval_wait_seconds_count")).toBe(3);
    expect(sample(text, "tollgate_approval_wait_seconds_sum")).toBe(906);
    expect(sample(text, "tollgate_approval_wait_seconds_bucket", { le: "5" })).toBe(2);
  });

  it("model errors by code, cancel latency in seconds", async () => {
    const m = new Metrics();
    m.modelError("model_timeout");
    m.cancelled(40);
    const text = await m.render();
    expect(sample(text, "tollgate_model_errors_total", { code: "model_timeout" })).toBe(1);
    expect(sample(text, "tollgate_model_errors_total", { code: "model_error" })).toBe(0);
    expect(sample(text, "tollgate_cancel_latency_seconds_count")).toBe(1);
    expect(sample(text, "tollgate_cancel_latency_seconds_sum")).toBeCloseTo(0.04);
    expect(sample(text, "tollgate_cancel_latency_seconds_bucket", { le: "0.025" })).toBe(0);
    expect(sample(text, "tollgate_cancel_latency_seconds_bucket", { le: "0.05" })).toBe(1);
  });

  it("gauges read their sources at each scrape; an unreadable store keeps the last count and the scrape answers", async () => {
    const m = new Metrics();
    let active = 2;
    let pending: number | Error = 3;
    m.watch({
      activeRuns: () => active,
      pendingApprovals: async () => {
        if (pending instanceof Error) throw pending;
        return pending;
      },
    });
    let text = await m.render();
    expect([sample(text, "tollgate_active_runs"), sample(text, "tollgate_pending_approvals")]).toEqual([2, 3]);
    active = 0;
    pending = 1;
    text = await m.render();
    expect([sample(text, "tollgate_active_runs"), sample(text, "tollgate_pending_approvals")]).toEqual([0, 1]);
    pending = new Error("database unavailable");
    text = await m.render();
    expect(sample(text, "tollgate_pending_approvals")).toBe(1);
  });

  it("renders Prometheus text format 0.0.4", () => {
    expect(new Metrics().contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});
