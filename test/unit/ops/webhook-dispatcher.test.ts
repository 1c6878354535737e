/**
 * The webhook dispatcher against a real SQLite outbox and a real HTTP receiver on a socket:
 * signatures, retries with the same delivery id, a stalling receiver, giving up, order per
 * thread, and a claimer that dies mid-delivery.
 */
import { createHmac } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Logger } from "../../../src/logger.js";
import { WebhookDispatcher, type WebhookDispatcherOptions, type WebhookOutcome } from "../../../src/ops/webhook-dispatcher.js";
import { signWebhook, verifyWebhook } from "../../../src/ops/webhook-signature.js";
import { webhookBackoffMs } from "../../../src/ops/webhook-backoff.js";
import { openSqliteStore, type SqliteStore } from "../../../src/store/sqlite/index.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

const SECRET = "s3cret-webhook-key-for-tests";
/** What a receiver computes on its own, with nothing of tollgate's: HMAC-SHA256 of the raw body. */
const expectedSignature = (raw: string) => `sha256=${createHmac("sha256", SECRET).update(raw, "utf8").digest("hex")}`;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Rig {
  store: SqliteStore;
  receiver: WebhookReceiver;
  outcomes: Array<[WebhookOutcome, string]>;
  warnings: Array<{ msg: string; fields?: Record<string, unknown> }>;
  infos: Array<{ msg: string; fields?: Record<string, unknown> }>;
  dispatcher(over?: Partial<WebhookDispatcherOptions>): WebhookDispatcher;
}

async function rig(): Promise<Rig> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-hooks-"));
  const store = await openSqliteStore(dir);
  const receiver = await startWebhookReceiver();
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }), () => store.close(), () => receiver.close());
  const outcomes: Rig["outcomes"] = [];
  const warnings: Rig["warnings"] = [];
  const infos: Rig["infos"] = [];
  const log: Logger = {
    debug() {},
    info: (msg, fields) => infos.push({ msg, fields }),
    warn: (msg, fields) => warnings.push({ msg, fields }),
    error: (msg, fields) => warnings.push({ msg, fields }),
    child: () => log,
  };
  return {
    store,
    receiver,
    outcomes,
    warnings,
    infos,
    dispatcher(over = {}) {
      const d = new WebhookDispatcher({
        outbox: store.webhooks,
        url: receiver.url,
        secret: SECRET,
        maxAttempts: 12,
        timeoutMs: 300,
        backoffBaseMs: 10,
        backoffCapMs: 50,
        // Long: every wake-up here must come from an enqueue or the end of an attempt.
        sweepMs: 60_000,
        log,
        onOutcome: (o, delivery) => outcomes.push([o, delivery.id]),
        ...over,
      });
      cleanups.push(() => d.stop());
      d.start();
      return d;
    },
  };
}

describe("webhook signature", () => {
  it("verifies with the secret over the raw body, and not with another secret or another body", () => {
    const body = '{"type":"approval.requested","a":1}';
    const sig = signWebhook(body, SECRET);
    expect(sig).toBe(expectedSignature(body));
    expect(verifyWebhook(body, SECRET, sig)).toBe(true);
    expect(verifyWebhook(body, "another-secret-entirely", sig)).toBe(false);
    expect(verifyWebhook('{"type":"approval.requested","a":2}', SECRET, sig)).toBe(false);
    expect(verifyWebhook(body, SECRET, undefined)).toBe(false);
  });

  it("backs off exponentially, jittered within [half, whole] of the step, capped", () => {
    expect(webhookBackoffMs(1, { baseMs: 1000, capMs: 60_000, random: () => 0 })).toBe(500);
    expect(webhookBackoffMs(1, { baseMs: 1000, capMs: 60_000, random: () => 1 })).toBe(1000);
    expect(webhookBackoffMs(4, { baseMs: 1000, capMs: 60_000, random: () => 1 })).toBe(8000);
    expect(webhookBackoffMs(30, { baseMs: 1000, capMs: 60_000, random: () => 1 })).toBe(60_000);
    expect(webhookBackoffMs(30, { baseMs: 1000, capMs: 60_000, random: () => 0 })).toBe(30_000);
  });
});

describe("WebhookDispatcher", () => {
  it("POSTs the stored body as JSON, signed, with the delivery id; marks it delivered", async () => {
    const r = await rig();
    r.dispatcher();
    const body = JSON.stringify({ type: "approval.requested", thread_id: "t1", note: "é ✓" });
    const id = await r.store.webhooks.enqueue("t1", body, Date.now());
    const [w] = await r.receiver.waitFor(() => r.receiver.delivered().length === 1 && r.receiver.delivered(), 10_000, "delivery");
    expect(w!.raw).toBe(body);
    expect(w!.contentType).toBe("application/json");
    expect(w!.delivery).toBe(id);
    expect(w!.signature).toBe(expectedSignature(w!.raw));
    await r.receiver.waitFor(() => r.outcomes.length === 1, 5_000, "outcome");
    expect(await r.store.webhooks.get(id)).toMatchObject({ status: "delivered", attempts: 1 });
    expect(r.outcomes).toEqual([["delivered", id]]);
  });

  it("a receiver that answers 500 then recovers gets the same delivery id again, then it is delivered", async () => {
    const r = await rig();
    let n = 0;
    r.receiver.answer = () => (++n <= 2 ? 500 : 200);
    r.dispatcher();
    const id = await r.store.webhooks.enqueue("t1", '{"n":1}', Date.now());
    await r.receiver.waitFor(() => r.receiver.delivered().length === 1, 10_000, "delivery after recovery");
    expect(r.receiver.received.map((w) => [w.delivery, w.answer])).toEqual([
      [id, 500],
      [id, 500],
      [id, 200],
    ]);
    expect(new Set(r.receiver.received.map((w) => w.signature)).size).toBe(1); // same bytes signed each time
    await r.receiver.waitFor(() => r.outcomes.length === 3, 5_000, "outcomes");
    expect(r.outcomes.map(([o]) => o)).toEqual(["retry", "retry", "delivered"]);
    expect(await r.store.webhooks.get(id)).toMatchObject({ status: "delivered", attempts: 3 });
  });

  it("a receiver that stalls is given up on after the attempt timeout and retried; other threads go meanwhile", async () => {
    const r = await rig();
    r.receiver.answer = (w) => (w.body.thread === "slow" && r.receiver.received.filter((x) => x.body.thread === "slow").length === 0 ? "stall" : 204);
    r.dispatcher({ timeoutMs: 300 });
    const slow = await r.store.webhooks.enqueue("slow", '{"thread":"slow"}', Date.now());
    await r.receiver.waitFor(() => r.receiver.stalled() === 1, 5_000, "the stalled request");
    const fast = await r.store.webhooks.enqueue("fast", '{"thread":"fast"}', Date.now());
    // The other thread's delivery goes while the first is still held.
    await r.receiver.waitFor(() => r.receiver.delivered().some((w) => w.delivery === fast), 5_000, "the other thread's delivery");
    await r.receiver.waitFor(() => r.receiver.delivered().some((w) => w.delivery === slow), 10_000, "the retry of the stalled one");
    const attempts = r.receiver.received.filter((w) => w.delivery === slow).map((w) => w.answer);
    expect(attempts).toEqual(["stall", 204]);
    expect((await r.store.webhooks.get(slow))?.last_error).toMatch(/no answer within 300 ms/);
  });

  it("with every slot held by a stalled receiver, it waits for a slot instead of polling the outbox", async () => {
    const r = await rig();
    r.receiver.answer = (w) => (w.body.thread === "held" ? "stall" : 204);
    // Counts how often the dispatcher reads the outbox: that is database work a run competes with.
    let reads = 0;
    const outbox = r.store.webhooks;
    const counted: typeof outbox = Object.create(outbox);
    counted.claimDue = (...a) => (reads++, outbox.claimDue(...a));
    counted.nextDueAt = (...a) => (reads++, outbox.nextDueAt(...a));
    const held = await outbox.enqueue("held", '{"thread":"held"}', Date.now());
    const waiting = await outbox.enqueue("waiting", '{"thread":"waiting"}', Date.now());
    r.dispatcher({ outbox: counted, concurrency: 1, timeoutMs: 1_000 });
    await r.receiver.waitFor(() => r.receiver.stalled() === 1, 5_000, "the held request");
    const before = reads;
    // The held attempt times out, its slot frees, and the waiting thread's delivery goes.
    await r.receiver.waitFor(() => r.receiver.delivered().some((w) => w.delivery === waiting), 10_000, "the waiting delivery");
    // While the slot was held for a second, the outbox was read a handful of times at most (a
    // poll on the due row spun through it hundreds of times).
    expect(reads - before).toBeLessThan(20);
    expect(r.receiver.received.filter((w) => w.delivery === held).length).toBeGreaterThanOrEqual(1);
  });

  it("after max attempts a delivery is marked failed and logged, and the thread's next one goes", async () => {
    const r = await rig();
    r.receiver.answer = (w) => (w.body.n === 1 ? 503 : 200);
    r.dispatcher({ maxAttempts: 3 });
    const first = await r.store.webhooks.enqueue("t1", '{"n":1}', Date.now());
    const second = await r.store.webhooks.enqueue("t1", '{"n":2}', Date.now());
    await r.receiver.waitFor(() => r.receiver.delivered().length === 1, 10_000, "the next delivery");
    expect(r.receiver.received.map((w) => [w.delivery, w.answer])).toEqual([
      [first, 503],
      [first, 503],
      [first, 503],
      [second, 200],
    ]);
    expect(await r.store.webhooks.get(first)).toMatchObject({ status: "failed", attempts: 3, last_error: "HTTP 503" });
    await r.receiver.waitFor(() => r.outcomes.length === 4, 5_000, "outcomes");
    expect(r.outcomes).toEqual([
      ["retry", first],
      ["retry", first],
      ["failed", first],
      ["delivered", second],
    ]);
    const warned = r.warnings.find((w) => w.msg.includes("giving up"));
    expect(warned?.fields).toMatchObject({ thread_id: "t1", delivery_id: first, attempts: 3 });
  });

  it("delivers in order per thread though the receiver fails at random", async () => {
    const r = await rig();
    let i = 0;
    r.receiver.answer = () => ([500, 200, 200, 500, 500, 200][i++ % 6]!);
    r.dispatcher({ concurrency: 4 });
    const ids: Record<string, string[]> = { a: [], b: [] };
    for (let n = 0; n < 6; n++) for (const t of ["a", "b"]) ids[t]!.push(await r.store.webhooks.enqueue(t, JSON.stringify({ t, n }), Date.now()));
    await r.receiver.waitFor(() => r.receiver.delivered().length === 12, 20_000, "all twelve");
    for (const t of ["a", "b"]) {
      expect(r.receiver.delivered().filter((w) => w.body.t === t).map((w) => w.delivery)).toEqual(ids[t]);
      // Nothing of a thread was sent before the one ahead of it was delivered.
      const sent = r.receiver.received.filter((w) => w.body.t === t).map((w) => w.body.n as number);
      expect(sent).toEqual([...sent].sort((x, y) => x - y));
    }
  });

  it("a claimer that dies mid-delivery leaves it to another once its lease runs out: same delivery id", async () => {
    const r = await rig();
    r.receiver.answer = () => (r.receiver.received.length === 0 ? "stall" : 204);
    const dead = r.dispatcher({ timeoutMs: 60_000 });
    const id = await r.store.webhooks.enqueue("t1", '{"n":1}', Date.now());
    await r.receiver.waitFor(() => r.receiver.stalled() === 1, 5_000, "the stalled request");
    await dead.stop(); // its attempt aborted, nothing recorded: as if the process died
    const lease = 60_000 * 2 + 1_000;
    // Not claimable before its lease runs out...
    expect(await r.store.webhooks.claimDue(Date.now() + lease - 5_000, 1_000, 10)).toEqual([]);
    // ...and after it, sent by another claimer, with the same id.
    r.dispatcher({ now: () => Date.now() + lease + 1 });
    await r.receiver.waitFor(() => r.receiver.delivered().length === 1, 5_000, "the redelivery");
    expect(r.receiver.received.map((w) => [w.delivery, w.answer])).toEqual([
      [id, "stall"],
      [id, 204],
    ]);
  });

  it("deletes deliveries finished longer ago than the retention, at start and then every so often, batch by batch; pending ones stay", async () => {
    const r = await rig();
    const DAY = 86_400_000;
    let ahead = 0;
    const now = () => Date.now() + ahead;
    const pruned = () => r.infos.filter((i) => i.msg.includes("pruned")).map((i) => i.fields?.deleted);
    // Left by an earlier process ten days ago: five delivered, one failed, one still owed.
    const t0 = Date.now() - 10 * DAY;
    const old: string[] = [];
    for (let n = 0; n < 6; n++) old.push(await r.store.webhooks.enqueue(`old-${n}`, `{"n":${n}}`, t0));
    for (const d of await r.store.webhooks.claimDue(t0, 1_000, 10)) {
      await r.store.webhooks.settle(d.id, d.attempts, d.id === old[5] ? { error: "HTTP 500", retryAt: "failed" } : { delivered: true });
    }
    const owed = await r.store.webhooks.enqueue("owed", '{"n":"owed"}', t0);
    r.receiver.answer = (w) => (w.body.n === "owed" ? "stall" : 200);
    // Batches of two: the six old ones take four statements, in one prune.
    r.dispatcher({ now, retentionMs: 7 * DAY, pruneEveryMs: 50, pruneBatch: 2, timeoutMs: 60_000 });
    await r.receiver.waitFor(() => pruned().length === 1, 5_000, "the prune at start");
    expect(pruned()).toEqual([6]);
    for (const id of old) expect(await r.store.webhooks.get(id)).toBeUndefined();
    // The owed one is mid-attempt (its receiver stalls): pending, so it is kept, however old.
    expect(await r.store.webhooks.get(owed)).toMatchObject({ status: "pending" });
    // Sent today: kept until it finished a week ago, then the next prune takes it.
    const today = await r.store.webhooks.enqueue("t3", '{"n":4}', now());
    await r.receiver.waitFor(() => r.receiver.delivered().length === 1, 5_000, "today's delivery");
    await r.receiver.waitFor(() => r.outcomes.length === 1, 5_000, "its outcome");
    expect(await r.store.webhooks.get(today)).toMatchObject({ status: "delivered" });
    ahead = 8 * DAY;
    await r.receiver.waitFor(() => pruned().length === 2, 5_000, "a later prune");
    expect(pruned()).toEqual([6, 1]);
    expect(await r.store.webhooks.get(today)).toBeUndefined();
    expect(await r.store.webhooks.get(owed)).toMatchObject({ status: "pending" });
  });

  it("without a retention nothing is deleted", async () => {
    const r = await rig();
    const t0 = Date.now() - 400 * 86_400_000;
    const id = await r.store.webhooks.enqueue("t1", '{"n":1}', t0);
    for (const d of await r.store.webhooks.claimDue(t0, 1_000, 10)) await r.store.webhooks.settle(d.id, d.attempts, { delivered: true });
    const next = await r.store.webhooks.enqueue("t1", '{"n":2}', Date.now());
    r.dispatcher();
    await r.receiver.waitFor(() => r.outcomes.length === 1, 5_000, "the next delivery");
    expect(r.outcomes).toEqual([["delivered", next]]);
    expect(await r.store.webhooks.get(id)).toMatchObject({ status: "delivered" });
    expect(r.infos.filter((i) => i.msg.includes("pruned"))).toEqual([]);
  });
});
