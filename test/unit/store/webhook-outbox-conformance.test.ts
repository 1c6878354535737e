/**
 * The webhook outbox's conformance suite, run on both stores (SQLite, PostgreSQL): enqueue joins
 * the caller's transaction, claims take only the due head of each thread's queue, a claim is a
 * lease (one claimer at a time; a dead claimer's delivery comes back when it runs out), and an
 * outcome is recorded only by the latest attempt.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../../src/store/postgres/index.js";
import { openSqliteStore } from "../../../src/store/sqlite/index.js";
import type { Store } from "../../../src/store/types.js";
import { assertPostgresAvailable, type PgCluster, skipPostgresSuite, startPostgres } from "../../helpers/postgres.js";

interface Backend {
  name: string;
  skip: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A fresh database and a way to open another store (another replica on PostgreSQL) on it. */
  fresh(): Promise<{ store: Store; open(): Promise<Store> }>;
}

const opened: Store[] = [];
const dirs: string[] = [];
const track = <S extends Store>(s: S) => (opened.push(s), s);

const sqlite: Backend = {
  name: "sqlite",
  skip: false,
  async setup() {},
  async teardown() {},
  async fresh() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-outbox-"));
    dirs.push(dir);
    return { store: track(await openSqliteStore(dir)), open: async () => track(await openSqliteStore(dir)) };
  },
};

let cluster: PgCluster | undefined;
const postgres: Backend = {
  name: "postgres",
  skip: skipPostgresSuite("webhook-outbox-conformance (postgres)"),
  async setup() {
    assertPostgresAvailable();
    cluster = await startPostgres();
  },
  async teardown() {
    await cluster?.stop();
  },
  async fresh() {
    const url = await cluster!.createDatabase();
    return { store: track(await openPostgresStore(url)), open: async () => track(await openPostgresStore(url)) };
  },
};

const T0 = 1_700_000_000_000;
const tid = () => `t-${randomUUID()}`;

describe.each([sqlite, postgres])("the $name webhook outbox", (backend) => {
  describe.skipIf(backend.skip)("conforms", () => {
    let s: Store;
    let open: () => Promise<Store>;
    beforeAll(async () => {
      await backend.setup();
      ({ store: s, open } = await backend.fresh());
    }, 60_000);
    afterAll(async () => {
      for (const o of opened.splice(0).reverse()) await o.close().catch(() => undefined);
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
      await backend.teardown();
    });

    /** Claims everything due at `now` and settles it delivered, so other tests' rows do not get in the way. */
    async function drain(now: number) {
      for (const d of await s.webhooks.claimDue(now, 1_000, 1_000)) await s.webhooks.settle(d.id, d.attempts, { delivered: true });
    }

    it("keeps the body byte for byte, numbers each thread's deliveries in order, and starts them pending and due", async () => {
      const t = tid();
      const body = JSON.stringify({ type: "approval.requested", note: "tab\tnewline\n é ✓" });
      const a = await s.webhooks.enqueue(t, body, T0);
      const b = await s.webhooks.enqueue(t, "{}", T0 + 1);
      expect(await s.webhooks.get(a)).toEqual({
        id: a,
        thread_id: t,
        seq: 1,
        body,
        attempts: 0,
        next_attempt_at: T0,
        status: "pending",
        last_error: null,
        created_at: T0,
        lane: "webhook",
        ref: null,
        receipt: null,
      });
      expect((await s.webhooks.list(t)).map((d) => [d.id, d.seq])).toEqual([
        [a, 1],
        [b, 2],
      ]);
      await drain(T0 + 10);
      await drain(T0 + 10);
    });

    it("an enqueue inside a transaction is kept or dropped with it, and announced only after its commit", async () => {
      const t = tid();
      let heard = 0;
      const off = s.webhooks.onEnqueued(() => heard++);
      let id = "";
      await expect(
        s.transaction(async (tx) => {
          id = await tx.webhooks.enqueue(t, "{}", T0);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await s.webhooks.get(id)).toBeUndefined();
      expect(heard).toBe(0);
      await s.transaction(async (tx) => {
        id = await tx.webhooks.enqueue(t, "{}", T0);
        expect(heard).toBe(0); // not yet committed
      });
      expect(heard).toBe(1);
      expect((await s.webhooks.get(id))?.status).toBe("pending");
      off();
      await drain(T0 + 10);
    });

    it("claims only the due head of each thread's queue; one thread's stuck head does not hold up another", async () => {
      const [t1, t2] = [tid(), tid()];
      const a1 = await s.webhooks.enqueue(t1, "a1", T0);
      const a2 = await s.webhooks.enqueue(t1, "a2", T0);
      const b1 = await s.webhooks.enqueue(t2, "b1", T0);
      const first = await s.webhooks.claimDue(T0, 1_000, 10);
      expect(first.map((d) => d.id).sort()).toEqual([a1, b1].sort());
      expect(first.every((d) => d.attempts === 1 && d.next_attempt_at === T0 + 1_000)).toBe(true);
      // Leased: not claimed again, and the row behind a leased head is not a head.
      expect(await s.webhooks.claimDue(T0 + 10, 1_000, 10)).toEqual([]);
      // t1's head fails and waits for a retry; t2's goes through.
      expect(await s.webhooks.settle(a1, 1, { error: "HTTP 500", retryAt: T0 + 5_000 })).toBe(true);
      expect(await s.webhooks.settle(b1, 1, { delivered: true })).toBe(true);
      expect(await s.webhooks.nextDueAt()).toBe(T0 + 5_000);
      expect(await s.webhooks.claimDue(T0 + 4_999, 1_000, 10)).toEqual([]);
      const retry = await s.webhooks.claimDue(T0 + 5_000, 1_000, 10);
      expect(retry.map((d) => [d.id, d.attempts])).toEqual([[a1, 2]]);
      expect((await s.webhooks.get(a1))?.last_error).toBe("HTTP 500");
      // Given up: the next one of the thread goes.
      expect(await s.webhooks.settle(a1, 2, { error: "HTTP 500", retryAt: "failed" })).toBe(true);
      expect((await s.webhooks.claimDue(T0 + 5_000, 1_000, 10)).map((d) => d.id)).toEqual([a2]);
      expect((await s.webhooks.get(a1))?.status).toBe("failed");
      await s.webhooks.settle(a2, 1, { delivered: true });
      expect(await s.webhooks.nextDueAt()).toBeUndefined();
    });

    it("a claim whose lease ran out is claimed again; the first claimer's late outcome is not recorded", async () => {
      const t = tid();
      const id = await s.webhooks.enqueue(t, "x", T0);
      const [mine] = await s.webhooks.claimDue(T0, 1_000, 10);
      const other = await open();
      const [theirs] = await other.webhooks.claimDue(T0 + 1_000, 1_000, 10);
      expect(theirs?.id).toBe(id);
      expect(theirs?.attempts).toBe(2);
      expect(await s.webhooks.settle(id, mine!.attempts, { error: "late", retryAt: T0 + 9_000 })).toBe(false);
      expect(await other.webhooks.settle(id, theirs!.attempts, { delivered: true })).toBe(true);
      expect(await other.webhooks.settle(id, theirs!.attempts, { delivered: true })).toBe(false);
      expect(await s.webhooks.get(id)).toMatchObject({ status: "delivered", attempts: 2 });
    });

    it("pruning deletes deliveries that finished before the cutoff, in batches, and never a pending one", async () => {
      const OLD = T0 - 10 * 86_400_000;
      const CUTOFF = T0 - 86_400_000;
      const t = tid();
      const delivered = [await s.webhooks.enqueue(t, "d1", OLD), await s.webhooks.enqueue(t, "d2", OLD + 1)];
      for (const id of delivered) {
        const [d] = await s.webhooks.claimDue(OLD + 10, 1_000, 1);
        expect(d?.id).toBe(id);
        await s.webhooks.settle(id, d!.attempts, { delivered: true });
      }
      const failed = await s.webhooks.enqueue(t, "f", OLD + 2);
      const [f] = await s.webhooks.claimDue(OLD + 10, 1_000, 1);
      await s.webhooks.settle(failed, f!.attempts, { error: "HTTP 500", retryAt: "failed" });
      // As old, but still owed: one leased mid-attempt, one waiting for its retry.
      const [u1, u2, u3] = [tid(), tid(), tid()];
      const leased = await s.webhooks.enqueue(u1, "leased", OLD);
      const waiting = await s.webhooks.enqueue(u2, "waiting", OLD);
      expect((await s.webhooks.claimDue(OLD + 10, 10 * 86_400_000, 10)).map((d) => d.id).sort()).toEqual([leased, waiting].sort());
      await s.webhooks.settle(waiting, 1, { error: "HTTP 503", retryAt: T0 + 60_000 });
      // Enqueued as long ago but finished only after the cutoff (it waited out an outage): kept,
      // so the window to look back on starts when a delivery ended.
      const late = await s.webhooks.enqueue(u3, "late", OLD);
      const [l] = await s.webhooks.claimDue(CUTOFF + 10, 1_000, 10);
      expect(l?.id).toBe(late);
      await s.webhooks.settle(late, l!.attempts, { error: "HTTP 500", retryAt: "failed" });
      // Finished recently: kept.
      const recent = await s.webhooks.enqueue(t, "recent", CUTOFF + 1);
      const [r] = await s.webhooks.claimDue(CUTOFF + 10, 1_000, 10);
      expect(r?.id).toBe(recent);
      await s.webhooks.settle(recent, r!.attempts, { delivered: true });

      expect(await s.webhooks.prune(CUTOFF, 2)).toBe(2); // a batch is at most `limit` rows
      expect(await s.webhooks.prune(CUTOFF, 100)).toBe(1);
      expect(await s.webhooks.prune(CUTOFF, 100)).toBe(0);
      for (const id of [...delivered, failed]) expect(await s.webhooks.get(id)).toBeUndefined();
      expect((await s.webhooks.list(t)).map((d) => d.id)).toEqual([recent]);
      expect(await s.webhooks.get(late)).toMatchObject({ status: "failed", created_at: OLD });
      expect(await s.webhooks.get(leased)).toMatchObject({ status: "pending", attempts: 1 });
      expect(await s.webhooks.get(waiting)).toMatchObject({ status: "pending", last_error: "HTTP 503" });
      // The thread's queue goes on after its pruned rows: the next one is behind the kept one.
      const next = await s.webhooks.enqueue(t, "next", T0);
      expect((await s.webhooks.list(t)).map((d) => [d.id, d.seq])).toEqual([
        [recent, 4],
        [next, 5],
      ]);
      await s.webhooks.settle(leased, 1, { delivered: true });
      await drain(T0 + 100_000);
    });

    it("lanes keep their own order per thread: a webhook stuck at its head holds no channel delivery back, and each lane claims only its own", async () => {
      const t = tid();
      const hook = await s.webhooks.enqueue(t, "hook", T0);
      const post = await s.webhooks.enqueue(t, "post", { at: T0, lane: "slack", ref: "intr-1" });
      const update = await s.webhooks.enqueue(t, "update", { at: T0 + 1, lane: "slack", ref: "intr-1" });
      // The webhook's head is claimed and failing: the Slack lane goes on regardless.
      const [claimedHook] = await s.webhooks.claimDue(T0 + 10, 60_000, 10);
      expect(claimedHook?.id).toBe(hook);
      await s.webhooks.settle(hook, 1, { error: "HTTP 500", retryAt: T0 + 1_000_000 });
      const slack = await s.webhooks.claimDue(T0 + 10, 60_000, { limit: 10, lane: "slack" });
      expect(slack.map((d) => [d.id, d.lane, d.ref])).toEqual([[post, "slack", "intr-1"]]); // the head only: order holds within the lane
      expect(await s.webhooks.nextDueAt("slack")).toBe(T0 + 10 + 60_000);
      expect(await s.webhooks.receipt("slack", "intr-1")).toBeUndefined();
      expect(await s.webhooks.settle(post, 1, { delivered: true, receipt: "1700000000.000001" })).toBe(true);
      expect(await s.webhooks.receipt("slack", "intr-1")).toBe("1700000000.000001");
      expect(await s.webhooks.receipt("webhook", "intr-1")).toBeUndefined();
      expect((await s.webhooks.claimDue(T0 + 10, 60_000, { limit: 10, lane: "slack" })).map((d) => d.id)).toEqual([update]);
      await s.webhooks.settle(update, 1, { delivered: true, receipt: "1700000000.000001" });
      expect((await s.webhooks.list(t)).map((d) => [d.lane, d.seq, d.status])).toEqual([
        ["webhook", 1, "pending"],
        ["slack", 2, "delivered"],
        ["slack", 3, "delivered"],
      ]);
      await s.webhooks.settle(hook, 1, { delivered: true });
      await drain(T0 + 2_000_000);
    });

    it("claimers racing on one store and on another replica take each delivery once", async () => {
      const threads = Array.from({ length: 12 }, tid);
      const ids = new Set<string>();
      for (const t of threads) ids.add(await s.webhooks.enqueue(t, t, T0));
      const other = await open();
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? other : s).webhooks.claimDue(T0 + 100_000, 60_000, 3)),
      );
      const got = claims.flat().map((d) => d.id);
      expect(new Set(got).size).toBe(got.length); // nobody twice
      expect(got.filter((id) => ids.has(id)).sort()).toEqual([...ids].sort()); // and all of them
      for (const c of claims.flat()) await s.webhooks.settle(c.id, c.attempts, { delivered: true });
    });
  });
});
