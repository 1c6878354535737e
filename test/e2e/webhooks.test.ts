/**
 * Approval webhooks end to end: a real server, a real receiver on a socket. Every interrupt
 * opened, decided, expired or cancelled is POSTed, signed over the raw body, with masked calls,
 * in order per thread; a receiver that fails, stalls or is down gets the same delivery retried;
 * a stalling receiver never holds up a run; a kill -9 between enqueue and delivery loses nothing.
 * Every body and its headers fit the `webhooks` entry of the OpenAPI document the server serves.
 */
import { createHmac } from "node:crypto";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { schemaChecker } from "../helpers/openapi-validator.js";
import { orderScript } from "../helpers/order-script.js";
import { pgDatabaseUrl, pgTestClusterUrl } from "../helpers/pg-test-db.js";
import { startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { expectNoneOf, expectNoStackTraces, type Stack, startStack, terminal, threadId } from "./support.js";

const SECRET = "whsec-test-0123456789abcdef";
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
};
const EMAIL = { to: "carol@example.com", subject: "Your refund", body: "Card ending 4242 refunded" };
const REFUND = { order_id: "A-1002", amount_cents: 500, reason: "late" };

/** Webhook settings shortened for tests: a test never sleeps out a real backoff. */
const hookEnv = (receiver: WebhookReceiver, extra: Record<string, string> = {}) => ({
  AUTH_TOKENS: JSON.stringify(TOKENS),
  APPROVAL_WEBHOOK_URL: receiver.url,
  APPROVAL_WEBHOOK_SECRET: SECRET,
  WEBHOOK_BACKOFF_BASE_MS: "20",
  WEBHOOK_BACKOFF_CAP_MS: "100",
  WEBHOOK_SWEEP_MS: "200",
  ...extra,
});

/**
 * Moves the thread's outbox rows `ms` back in time, as if enqueued and last tried that much
 * earlier. The server must be stopped; the test db is read-only, so this opens its own connection.
 */
async function backdateOutbox(dataDir: string, thread: string, ms: number): Promise<void> {
  const sql = "UPDATE webhook_outbox SET created_at = created_at - $1, next_attempt_at = next_attempt_at - $1 WHERE thread_id = $2";
  const cluster = pgTestClusterUrl();
  if (cluster) {
    const client = new pg.Client({ connectionString: pgDatabaseUrl(cluster, dataDir) });
    await client.connect();
    await client.query(sql, [ms, thread]).finally(() => client.end());
    return;
  }
  const db = new Database(path.join(dataDir, "tollgate.db"), { timeout: 5_000 });
  try {
    db.prepare(sql.replace(/\$\d/g, "?")).run(ms, ms, thread);
  } finally {
    db.close();
  }
}

/** The thread's deliveries the receiver answered 2xx, in arrival order. */
const deliveredFor = (r: WebhookReceiver, id: string) => r.delivered().filter((w) => w.body?.thread_id === id);

type Check = (value: unknown) => string | null;
/** The body and header schemas of the served document's approval webhook (loaded once a server is up). */
let documented: { body: Check; signature: Check; delivery: Check } | undefined;

/** Reads the webhook's schemas from what the server serves at /openapi.json, not from the code. */
async function loadDocumented(serverUrl: string): Promise<void> {
  if (documented) return;
  const res = await fetch(`${serverUrl}/openapi.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as any;
  const op = doc.webhooks?.approval?.post;
  expect(op, "the served document's webhooks.approval.post").toBeDefined();
  const header = (name: string) => schemaChecker(doc, op.parameters.find((p: any) => p.in === "header" && p.name === name).schema);
  documented = {
    body: schemaChecker(doc, op.requestBody.content["application/json"].schema),
    signature: header("X-Tollgate-Signature"),
    delivery: header("X-Tollgate-Delivery"),
  };
}

/**
 * Every request for the thread, each checked: signed over its raw body, JSON, with a delivery id,
 * body and headers as the served OpenAPI document's `webhooks` entry describes them.
 */
function checked(r: WebhookReceiver, id: string): ReceivedWebhook[] {
  const got = r.received.filter((w) => w.body?.thread_id === id);
  expect(documented, "loadDocumented() after the server started").toBeDefined();
  for (const w of got) {
    expect(documented!.body(w.body), `documented body: ${w.raw}`).toBeNull();
    expect(documented!.signature(w.signature), "documented X-Tollgate-Signature").toBeNull();
    expect(documented!.delivery(w.delivery), "documented X-Tollgate-Delivery").toBeNull();
    // As a receiver checks it, with nothing of tollgate's: HMAC-SHA256 of the raw body under the secret.
    expect(w.signature, `signature of ${w.raw}`).toBe(`sha256=${createHmac("sha256", SECRET).update(w.raw, "utf8").digest("hex")}`);
    expect(w.contentType).toBe("application/json");
    expect(w.delivery).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(w.body.at)).not.toBeNaN();
  }
  return got;
}

describe("approval webhooks", () => {
  let receiver: WebhookReceiver;
  let s: Stack;
  let ops: TollgateClient;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // An attempt's deadline long enough that a run and a decision finish well inside it.
    s = await startStack(hookEnv(receiver, { WEBHOOK_TIMEOUT_MS: "6000", WEBHOOK_MAX_ATTEMPTS: "3" }));
    await loadDocumented(s.server.url);
    ops = new TollgateClient({ baseUrl: s.server.url, token: "tok-ops-000001" });
  });
  afterAll(async () => {
    expectNoStackTraces(s.server);
    await s?.stop();
    await receiver?.close();
  });

  it("requested, decided and cancelled arrive signed, with the masked calls the API shows, in order per thread", async () => {
    const [a, b, c] = [threadId("hook-a"), threadId("hook-b"), threadId("hook-c")];
    s.model.push({ toolCalls: [{ id: "e1", name: "send_email", args: EMAIL }] });
    const ia = terminal(await s.client.run(a, "email carol").collect(), "interrupt");
    const shownA = (await s.client.getThread(a)).pending!;
    s.model.push({ text: "Sent." });
    terminal(await s.client.resume(a, ia.interrupt_id, { decisions: [{ call_id: "e1", approved: true }] }).collect(), "done");

    s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
    const ib = terminal(await s.client.run(b, "refund").collect(), "interrupt");
    s.model.push({ text: "No refund." });
    terminal(await ops.resume(b, ib.interrupt_id, { decisions: [{ call_id: "r1", approved: false, reason: "no" }] }).collect(), "done");

    s.model.push({ toolCalls: [{ id: "r2", name: "refund_order", args: REFUND }] });
    const ic = terminal(await s.client.run(c, "refund").collect(), "interrupt");
    expect((await s.client.cancel(c)).cancelled).toBe(true);

    await receiver.waitFor(() => deliveredFor(receiver, a).length === 2 && deliveredFor(receiver, b).length === 2 && deliveredFor(receiver, c).length === 2, 15_000, "six deliveries");
    const [reqA, decA] = checked(receiver, a).map((w) => w.body);
    expect(reqA).toEqual({
      type: "approval.requested",
      thread_id: a,
      interrupt_id: ia.interrupt_id,
      calls: shownA.calls,
      expires_at: ia.expires_at,
      requested_by: "alice",
      at: reqA.at,
    });
    // Masked as the API masks them: the sensitive fields never leave in a webhook.
    expect(reqA.calls[0].args).toEqual({ to: "***", subject: "Your refund", body: "***" });
    expectNoneOf([EMAIL.to, EMAIL.body], "webhook", receiver.received.map((w) => w.raw).join("\n"));
    expect(decA).toEqual({ ...reqA, type: "approval.decided", decided_by: "alice", decisions: [{ call_id: "e1", decision: "approved" }], at: decA.at });
    expect(Date.parse(decA.at)).toBeGreaterThanOrEqual(Date.parse(reqA.at));

    expect(checked(receiver, b).map((w) => [w.body.type, w.body.decided_by, w.body.decisions])).toEqual([
      ["approval.requested", undefined, undefined],
      ["approval.decided", "ops", [{ call_id: "r1", decision: "rejected" }]],
    ]);
    const [reqC, canC] = checked(receiver, c).map((w) => w.body);
    expect(reqC).toMatchObject({ type: "approval.requested", interrupt_id: ic.interrupt_id, requested_by: "alice" });
    expect(canC).toMatchObject({ type: "approval.cancelled", interrupt_id: ic.interrupt_id, requested_by: "alice", decided_by: "alice", calls: reqC.calls });
    expect(canC.decisions).toBeUndefined();
    // Each delivery once, each with its own id.
    const ids = [a, b, c].flatMap((t) => checked(receiver, t).map((w) => w.delivery));
    expect(new Set(ids).size).toBe(6);
  });

  it("a receiver that answers 500 then recovers gets the same delivery id again, then it is delivered", async () => {
    const id = threadId("hook-500");
    let failures = 2;
    receiver.answer = (w) => (w.body?.thread_id === id && failures-- > 0 ? 500 : 204);
    s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
    terminal(await s.client.run(id, "refund").collect(), "interrupt");
    await receiver.waitFor(() => deliveredFor(receiver, id).length === 1, 15_000, "the delivery after recovery");
    const tries = checked(receiver, id);
    expect(tries.map((w) => w.answer)).toEqual([500, 500, 204]);
    expect(new Set(tries.map((w) => w.delivery)).size).toBe(1);
    expect(new Set(tries.map((w) => w.raw)).size).toBe(1);
    receiver.answer = () => 204;
  });

  it("a stalling receiver holds up neither a run nor a decision; the delivery is retried after the attempt's deadline", async () => {
    const id = threadId("hook-stall");
    let stalls = 1;
    receiver.answer = (w) => (w.body?.thread_id === id && stalls-- > 0 ? "stall" : 204);
    s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
    const intr = terminal(await s.client.run(id, "refund").collect(), "interrupt");
    await receiver.waitFor(() => receiver.stalled() === 1, 10_000, "the stalled request");
    s.model.push({ text: "Refunded." });
    terminal(await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "r1", approved: true }] }).collect(), "done");
    s.model.push({ text: "Anything else?" });
    terminal(await s.client.run(id, "thanks").collect(), "done");
    // Both finished while the receiver still held the first request, unanswered.
    expect(receiver.stalled()).toBe(1);
    expect(checked(receiver, id).map((w) => w.answer)).toEqual(["stall"]);
    await receiver.waitFor(() => deliveredFor(receiver, id).length === 2, 20_000, "the retry and the decision");
    const tries = checked(receiver, id);
    expect(tries.map((w) => [w.body.type, w.answer])).toEqual([
      ["approval.requested", "stall"],
      ["approval.requested", 204],
      ["approval.decided", 204],
    ]);
    expect(tries[1]!.delivery).toBe(tries[0]!.delivery);
  });

  it("after WEBHOOK_MAX_ATTEMPTS a delivery is failed and logged, and the thread's next one goes", async () => {
    const id = threadId("hook-fail");
    receiver.answer = (w) => (w.body?.thread_id === id && w.body.type === "approval.requested" ? 500 : 204);
    s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
    const intr = terminal(await s.client.run(id, "refund").collect(), "interrupt");
    s.model.push({ text: "Refunded." });
    terminal(await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: "r1", approved: true }] }).collect(), "done");
    await receiver.waitFor(() => deliveredFor(receiver, id).length === 1, 15_000, "the decision after the failed request");
    const tries = checked(receiver, id);
    expect(tries.map((w) => [w.body.type, w.answer])).toEqual([
      ["approval.requested", 500],
      ["approval.requested", 500],
      ["approval.requested", 500],
      ["approval.decided", 204],
    ]);
    const failed = tries[0]!.delivery;
    const gaveUp = () => (s.server.stdout() + s.server.stderr()).split("\n").find((l) => l.includes(failed) && l.includes("giving up"));
    const line = await receiver.waitFor(gaveUp, 5_000, "the log line");
    expect(line).toMatch(/warn/i);
    expect(line).toContain(id);
    receiver.answer = () => 204;
  });
});

describe("approval webhook configuration", () => {
  it("a URL without a secret refuses to start (exit 2, naming the secret); the secret is scrubbed from logs", async () => {
    await expect(startServer({ MODEL: "demo", APPROVAL_WEBHOOK_URL: "http://127.0.0.1:9/hooks" })).rejects.toThrow(
      /code 2[\s\S]*APPROVAL_WEBHOOK_SECRET/,
    );
    const { loadConfig } = await import("../../src/config.js");
    expect(loadConfig({ APPROVAL_WEBHOOK_URL: "http://127.0.0.1:9/h", APPROVAL_WEBHOOK_SECRET: SECRET }).secrets).toContain(SECRET);
    expect(loadConfig({ APPROVAL_WEBHOOK_URL: "http://127.0.0.1:9/h", APPROVAL_WEBHOOK_SECRET: SECRET }).webhook).toMatchObject({ maxAttempts: 12 });
    expect(loadConfig({}).webhook).toBeUndefined();
    expect(() => loadConfig({ APPROVAL_WEBHOOK_URL: "https://u:p@example.com/h", APPROVAL_WEBHOOK_SECRET: SECRET })).toThrow(/APPROVAL_WEBHOOK_URL/);
    expect(() => loadConfig({ APPROVAL_WEBHOOK_URL: "ftp://example.com/h", APPROVAL_WEBHOOK_SECRET: SECRET })).toThrow(/APPROVAL_WEBHOOK_URL/);
  });
});

describe("approval webhooks across a restart", () => {
  it("expired arrives with the masked calls and no decider", async () => {
    const receiver = await startWebhookReceiver();
    const s = await startStack(hookEnv(receiver, { APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" }));
    try {
      await loadDocumented(s.server.url);
      const id = threadId("hook-exp");
      s.model.push({ toolCalls: [{ id: "e1", name: "send_email", args: EMAIL }] });
      const intr = terminal(await s.client.run(id, "email").collect(), "interrupt");
      await receiver.waitFor(() => deliveredFor(receiver, id).length === 2, 15_000, "requested and expired");
      const [req, exp] = checked(receiver, id).map((w) => w.body);
      expect(exp).toEqual({ ...req, type: "approval.expired", at: exp.at });
      expect(exp).toMatchObject({ interrupt_id: intr.interrupt_id, requested_by: "alice", expires_at: intr.expires_at });
      expect(exp.calls[0].args).toEqual({ to: "***", subject: "Your refund", body: "***" });
      expect(Date.parse(exp.at)).toBeGreaterThanOrEqual(Date.parse(intr.expires_at));
    } finally {
      await s.stop();
      await receiver.close();
    }
  });

  it("kill -9 between enqueue and delivery: after the restart it is delivered, once, with the same delivery id", async () => {
    let receiver = await startWebhookReceiver();
    const port = receiver.port;
    const url = receiver.url;
    await receiver.close(); // down when the interrupt opens
    const env = { ...hookEnv({ url } as WebhookReceiver), WEBHOOK_BACKOFF_BASE_MS: "200", WEBHOOK_BACKOFF_CAP_MS: "400", WEBHOOK_TIMEOUT_MS: "300" };
    const s = await startStack(env);
    await loadDocumented(s.server.url);
    const id = threadId("hook-kill");
    s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
    const intr = terminal(await s.client.run(id, "refund").collect(), "interrupt");
    const pending = () => s.db.prepare("SELECT id, status, attempts FROM webhook_outbox WHERE thread_id = ? ORDER BY seq").all(id) as Array<{ id: string; status: string; attempts: number }>;
    const [row] = pending();
    expect(row).toMatchObject({ status: "pending" });
    await s.server.kill("SIGKILL");
    s.db.close();

    receiver = await startWebhookReceiver(port);
    const again = await startServer({ ...env, MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url }, { dataDir: s.server.dataDir });
    try {
      await receiver.waitFor(() => deliveredFor(receiver, id).length === 1, 20_000, "the delivery after the restart");
      const got = checked(receiver, id);
      expect(got.map((w) => [w.delivery, w.body.type, w.body.interrupt_id])).toEqual([[row!.id, "approval.requested", intr.interrupt_id]]);
      const db = openDb(again.dataDir);
      const rows = () => db.prepare("SELECT id, status FROM webhook_outbox WHERE thread_id = ?").all(id) as Array<{ status: string }>;
      // The 2xx reached the receiver before the server recorded it.
      await receiver.waitFor(() => rows()[0]?.status === "delivered", 5_000, "the delivery recorded");
      expect(rows()).toEqual([{ id: row!.id, status: "delivered" }]);
      db.close();
    } finally {
      await again.kill();
      await s.model.close();
      await receiver.close();
    }
  });
});

describe("approval webhook retention", () => {
  it("deliveries finished longer ago than WEBHOOK_RETENTION_HOURS are deleted (logged), newer and pending ones stay", async () => {
    const receiver = await startWebhookReceiver();
    // A short attempt deadline: the owed delivery may be mid-attempt at the stop, and its lease
    // (twice the deadline and a second) must run out before the restarted server sends it.
    // Attempts enough that the owed one, refused throughout, is still pending after the restart.
    const tuning = { WEBHOOK_TIMEOUT_MS: "300", WEBHOOK_MAX_ATTEMPTS: "100000" };
    const s = await startStack(hookEnv(receiver, tuning));
    const [old, recent, owed] = [threadId("hook-old"), threadId("hook-recent"), threadId("hook-owed")];
    let again: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      for (const id of [old, recent]) {
        s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
        terminal(await s.client.run(id, "refund").collect(), "interrupt");
      }
      await receiver.waitFor(() => deliveredFor(receiver, old).length && deliveredFor(receiver, recent).length, 15_000, "both requested");
      const status = (id: string) => (s.db.prepare("SELECT status FROM webhook_outbox WHERE thread_id = ?").all(id) as Array<{ status: string }>).map((r) => r.status);
      await receiver.waitFor(() => [old, recent].every((id) => status(id)[0] === "delivered"), 5_000, "both recorded delivered");
      // One still owed when the server stops: its receiver answers 503 for now.
      receiver.answer = () => 503;
      s.model.push({ toolCalls: [{ id: "r1", name: "refund_order", args: REFUND }] });
      terminal(await s.client.run(owed, "refund").collect(), "interrupt");
      await receiver.waitFor(() => receiver.received.some((w) => w.body?.thread_id === owed), 15_000, "the owed one tried");
      await s.server.kill();
      await backdateOutbox(s.server.dataDir, old, 49 * 3_600_000);
      await backdateOutbox(s.server.dataDir, owed, 49 * 3_600_000);

      const env = { ...hookEnv(receiver, tuning), MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url };
      again = await startServer({ ...env, WEBHOOK_RETENTION_HOURS: "48" }, { dataDir: s.server.dataDir });
      const line = await receiver.waitFor(
        () => again!.stdout().split("\n").find((l) => l.includes("pruned finished webhook deliveries")),
        10_000,
        "the prune's log line",
      );
      expect(JSON.parse(line)).toMatchObject({ level: "info", deleted: 1 });
      expect(status(old)).toEqual([]);
      expect(status(recent)).toEqual(["delivered"]);
      expect(status(owed)).toEqual(["pending"]);
      // Owed, however old: sent once the receiver is back.
      receiver.answer = () => 200;
      await receiver.waitFor(() => deliveredFor(receiver, owed).length === 1, 15_000, "the owed delivery");
    } finally {
      await again?.kill();
      await s.stop();
      await receiver.close();
    }
  });

  it("WEBHOOK_RETENTION_HOURS is a week by default and must be a whole number of hours, at least one", async () => {
    const { loadConfig } = await import("../../src/config.js");
    const hook = { APPROVAL_WEBHOOK_URL: "http://127.0.0.1:9/h", APPROVAL_WEBHOOK_SECRET: SECRET };
    expect(loadConfig(hook).webhook?.retentionMs).toBe(7 * 24 * 3_600_000);
    expect(loadConfig({ ...hook, WEBHOOK_RETENTION_HOURS: "2" }).webhook?.retentionMs).toBe(2 * 3_600_000);
    for (const bad of ["0", "1.5", "-3", "soon"]) expect(() => loadConfig({ ...hook, WEBHOOK_RETENTION_HOURS: bad })).toThrow(/WEBHOOK_RETENTION_HOURS/);
  });
});

// kill-point.mjs patches better-sqlite3, so these run on SQLite only.
describe.skipIf(pgTestClusterUrl() !== undefined)("approval webhooks at a kill point", () => {
  it.each([
    ["interrupt:before", false],
    ["interrupt:after", true],
  ] as const)("killed at %s: a webhook exists exactly when the interrupt it reports does", async (point, opened) => {
    const receiver = await startWebhookReceiver();
    const model = await startFakeOpenAI({ script: orderScript });
    const env = { ...hookEnv(receiver), AUTH_TOKENS: undefined, MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url };
    const id = threadId("hook-point");
    const doomed = await startServer({ ...env, TOLLGATE_KILL_AT: point });
    await new TollgateClient({ baseUrl: doomed.url, reconnect: { retries: 0 } }).run(id, "refund A-1001 5 cents").collect().catch(() => undefined);
    expect((await doomed.exited).signal, "the server died at the kill point").toBe("SIGKILL");
    const after = await startServer(env, { dataDir: doomed.dataDir });
    await loadDocumented(after.url);
    const db = openDb(after.dataDir);
    try {
      const interrupts = db.prepare("SELECT interrupt_id FROM interrupts WHERE thread_id = ?").all(id) as Array<{ interrupt_id: string }>;
      expect(interrupts).toHaveLength(opened ? 1 : 0);
      if (opened) {
        await receiver.waitFor(() => deliveredFor(receiver, id).length === 1, 15_000, "the requested webhook");
        expect(checked(receiver, id).map((w) => [w.body.type, w.body.interrupt_id])).toEqual([["approval.requested", interrupts[0]!.interrupt_id]]);
      }
      // Recovery ran before the server was ready: nothing invented for an interrupt that never opened.
      expect(db.prepare("SELECT count(*) AS n FROM webhook_outbox WHERE thread_id = ?").get(id)).toEqual({ n: opened ? 1 : 0 });
    } finally {
      db.close();
      await after.kill();
      await model.close();
      await receiver.close();
    }
  });
});
