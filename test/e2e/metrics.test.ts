import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProtocolEvent } from "../../src/protocol/index.js";
import { call, expectNoStackTraces, only, type Stack, startStack, terminal, threadId } from "./support.js";

// GET /metrics on a real server: what a scrape shows after runs that end every way, decisions of
// every kind a person makes, a cancel and a model error.
const ALICE = "tok-alice-metrics-1";
const PROM = "tok-prometheus-01";
const ROOT = "tok-root-admin-01";
const AUTH_TOKENS = JSON.stringify({
  [ALICE]: { sub: "alice", roles: ["user"] },
  [PROM]: { sub: "prometheus", roles: ["metrics"] },
  [ROOT]: { sub: "root", roles: ["admin"] },
});

let s: Stack;
beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS });
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
});

async function scrape(token = PROM): Promise<string> {
  const res = await call(s.server.url, "GET", "/metrics", undefined, { authorization: `Bearer ${token}` });
  expect(res.status).toBe(200);
  return res.text;
}

/** One sample of the exposition; undefined when absent. */
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

const email = (id: string) => ({ toolCalls: [{ id, name: "send_email", args: { to: "c@example.com", subject: "Hi", body: "Your order" } }] });
const tokenCount = (events: ProtocolEvent[]) => only(events, "token").length;

describe("GET /metrics", () => {
  it("counts runs by outcome, tokens, decisions, waits, pending and active runs, cancels and model errors", async () => {
    const before = await scrape();
    const delta = (after: string, name: string, labels?: Record<string, string>) => sample(after, name, labels)! - sample(before, name, labels)!;
    let tokens = 0;

    // A plain answer: completed, with tokens (first-token time of a message run).
    s.model.push({ text: "Hello there, how can I help?" });
    const hello = await s.client.run(threadId("m-hello"), "hi").collect();
    terminal(hello, "done");
    tokens += tokenCount(hello);
    expect(tokenCount(hello)).toBeGreaterThan(1);

    // Two interrupts; while they wait, the store has them pending.
    const approveId = threadId("m-approve");
    s.model.push(email("ma1"));
    const toApprove = terminal(await s.client.run(approveId, "email them").collect(), "interrupt");
    const rejectId = threadId("m-reject");
    s.model.push(email("mr1"));
    const toReject = terminal(await s.client.run(rejectId, "email them").collect(), "interrupt");
    const cancelIntrId = threadId("m-cancel-intr");
    s.model.push(email("mc1"));
    terminal(await s.client.run(cancelIntrId, "email them").collect(), "interrupt");
    expect(sample(await scrape(), "tollgate_pending_approvals")).toBe(3);

    // Approved, rejected (each resumes into an answer with tokens), and one closed by a cancel.
    s.model.push({ text: "Sent it." });
    const approved = await s.client.resume(approveId, toApprove.interrupt_id, { decisions: [{ call_id: "ma1", approved: true }] }).collect();
    terminal(approved, "done");
    s.model.push({ text: "Not sending it then." });
    const rejected = await s.client.resume(rejectId, toReject.interrupt_id, { decisions: [{ call_id: "mr1", approved: false }] }).collect();
    terminal(rejected, "done");
    tokens += tokenCount(approved) + tokenCount(rejected);
    expect((await s.client.cancel(cancelIntrId)).cancelled).toBe(true);
    expect(sample(await scrape(), "tollgate_pending_approvals")).toBe(0);

    // A run in flight shows as active; cancelled, it ends and its cancel latency is observed.
    const hangId = threadId("m-hang");
    s.model.push({ hang: true, text: "Thinking" });
    const hanging = s.client.run(hangId, "think hard");
    const it = hanging[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value).toMatchObject({ type: "token" });
    expect(sample(await scrape(), "tollgate_active_runs")).toBe(1);
    expect((await s.client.cancel(hangId)).cancelled).toBe(true);
    const rest: ProtocolEvent[] = [first.value as ProtocolEvent];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value as ProtocolEvent);
    terminal(rest, "cancelled");
    tokens += tokenCount(rest);

    // The model endpoint fails.
    s.model.push({ status: 500 });
    expect(terminal(await s.client.run(threadId("m-500"), "hi").collect(), "error").code).toBe("model_error");

    const after = await scrape();
    expect(sample(after, "tollgate_active_runs")).toBe(0);
    expect(delta(after, "tollgate_runs_total", { outcome: "completed" })).toBe(3);
    expect(delta(after, "tollgate_runs_total", { outcome: "interrupted" })).toBe(3);
    expect(delta(after, "tollgate_runs_total", { outcome: "cancelled" })).toBe(1);
    expect(delta(after, "tollgate_runs_total", { outcome: "error" })).toBe(1);
    expect(delta(after, "tollgate_runs_total", { outcome: "max_rounds" })).toBe(0);
    expect(delta(after, "tollgate_token_events_total")).toBe(tokens);
    // First-token times: the hello and the cancelled run (messages), the two resumes' answers.
    expect(delta(after, "tollgate_time_to_first_token_seconds_count", { kind: "message" })).toBe(2);
    expect(delta(after, "tollgate_time_to_first_token_seconds_count", { kind: "resume" })).toBe(2);
    // Decisions by the face they came through; a cancel closes the interrupt, no face decided it.
    expect(delta(after, "tollgate_approvals_total", { decision: "approved", via: "api" })).toBe(1);
    expect(delta(after, "tollgate_approvals_total", { decision: "rejected", via: "api" })).toBe(1);
    expect(delta(after, "tollgate_approvals_total", { decision: "cancelled", via: "system" })).toBe(1);
    expect(delta(after, "tollgate_approvals_total", { decision: "expired", via: "system" })).toBe(0);
    expect(delta(after, "tollgate_approval_wait_seconds_count")).toBe(3);
    expect(delta(after, "tollgate_cancel_latency_seconds_count")).toBe(1);
    expect(delta(after, "tollgate_model_errors_total", { code: "model_error" })).toBe(1);
    expect(delta(after, "tollgate_model_errors_total", { code: "model_timeout" })).toBe(0);
    // Process metrics and event-loop lag, as Node's default collectors name them.
    expect(after).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(after).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
  });

  it("is Prometheus text, readable with the metrics or admin role; 401 without a token, 403 without the role", async () => {
    const ok = await call(s.server.url, "GET", "/metrics", undefined, { authorization: `Bearer ${PROM}` });
    expect(ok.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain("# TYPE tollgate_runs_total counter");
    expect((await call(s.server.url, "GET", "/metrics", undefined, { authorization: `Bearer ${ROOT}` })).status).toBe(200);

    const anonymous = await call(s.server.url, "GET", "/metrics");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(anonymous.text).not.toContain("tollgate_");
    const user = await call(s.server.url, "GET", "/metrics", undefined, { authorization: `Bearer ${ALICE}` });
    expect(user.status).toBe(403);
    expect(user.json.error.code).toBe("forbidden");
    expect(user.text).not.toContain("tollgate_runs_total");
  });

  it("an expiry is a decision of the system: counted as expired, its wait at least the approval window, logged without a principal", async () => {
    const short = await startStack({ APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
    try {
      const id = threadId("m-expire");
      short.model.push(email("me1"));
      const intr = terminal(await short.client.run(id, "email them").collect(), "interrupt");
      await expect.poll(async () => (await short.client.getThread(id)).last_outcome, { timeout: 10_000 }).toBe("expired");
      const text = (await call(short.server.url, "GET", "/metrics")).text;
      expect(sample(text, "tollgate_approvals_total", { decision: "expired", via: "system" })).toBe(1);
      expect(sample(text, "tollgate_approval_wait_seconds_count")).toBe(1);
      expect(sample(text, "tollgate_approval_wait_seconds_sum")).toBeGreaterThanOrEqual(1);
      expect(sample(text, "tollgate_pending_approvals")).toBe(0);
      const decided = short.server
        .stdout()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === "approval decided" && l.interrupt_id === intr.interrupt_id);
      expect(decided).toEqual([expect.objectContaining({ thread_id: id, calls: [{ call_id: "me1", tool: "send_email", decision: "expired" }] })]);
      expect(decided[0]).not.toHaveProperty("principal");
    } finally {
      await short.stop();
    }
  });

  it("with auth off, anyone may read it", async () => {
    const open = await startStack();
    try {
      const res = await call(open.server.url, "GET", "/metrics");
      expect(res.status).toBe(200);
      expect(res.text).toContain("tollgate_pending_approvals 0");
    } finally {
      await open.stop();
    }
  });
});
