/**
 * The store conformance suite: a store is an interface with two implementations (SQLite, the
 * default; PostgreSQL, shared by replicas) and this one suite, which both must pass. Every
 * assertion is something a caller relies on. PostgreSQL runs on one throwaway cluster for the
 * file, a fresh database per group; PostgreSQL-only behaviour (leases, notices between replicas,
 * a listener that reconnects) is in groups the SQLite store skips, since its contract is one process.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { NOT_HOLDER, REUSED_CALL_ID } from "../../../src/ledger/index.js";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/index.js";
import { openSqliteStore } from "../../../src/store/sqlite/index.js";
import type {
  AuditRecord,
  InterruptCall,
  InterruptRecord,
  NewInterrupt,
  LoggedEvent,
  NoticeChannel,
  ReplicaBus,
  Store,
} from "../../../src/store/types.js";
import type { Clock } from "../../../src/clock.js";
import { createSecretScrubber } from "../../../src/ops/index.js";
import type { SecretFilter } from "../../../src/store/index.js";
import { ERROR, emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { assertPostgresAvailable, type PgCluster, skipPostgresSuite, startPostgres } from "../../helpers/postgres.js";

type Row = Record<string, unknown>;

/** One database, fresh for a group: its first store, more stores on it, and raw SQL for what no store offers. */
interface Db {
  store: Store;
  /** Another store on the same database: another replica (PostgreSQL), another connection (SQLite). */
  open(opts?: { onError?: (msg: string, err: unknown) => void; clock?: Clock; scrub?: SecretFilter }): Promise<Store>;
  /** Raw SQL with `?` placeholders, as the store's own connection runs it. */
  sql(text: string, params?: unknown[]): Promise<Row[]>;
}

interface Backend {
  name: "sqlite" | "postgres";
  skip: boolean;
  /** Replicas share the database: leases matter and notices cross processes. */
  replicated: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  fresh(): Promise<Db>;
}

const opened: Store[] = [];
const dirs: string[] = [];
async function closeAll() {
  for (const s of opened.splice(0).reverse()) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

function track<S extends Store>(s: S): S {
  opened.push(s);
  return s;
}

const sqlite: Backend = {
  name: "sqlite",
  skip: false,
  replicated: false,
  async setup() {},
  async teardown() {},
  async fresh() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-conformance-"));
    dirs.push(dir);
    const store = track(await openSqliteStore(dir));
    return {
      store,
      open: async (opts) => track(await openSqliteStore(dir, { clock: opts?.clock, scrub: opts?.scrub })),
      async sql(text, params = []) {
        const stmt = store.db.prepare(text);
        if (stmt.reader) return stmt.all(...params) as Row[];
        stmt.run(...params);
        return [];
      },
    };
  },
};

let cluster: PgCluster | undefined;
const postgres: Backend = {
  name: "postgres",
  skip: skipPostgresSuite("store-conformance (postgres)"),
  replicated: true,
  async setup() {
    assertPostgresAvailable();
    cluster = await startPostgres();
  },
  async teardown() {
    await cluster?.stop();
  },
  async fresh() {
    const url = await cluster!.createDatabase();
    const store = track(await openPostgresStore(url, { poolMax: 30 }));
    return {
      store,
      open: async (opts) => track(await openPostgresStore(url, { poolMax: 30, ...opts })),
      async sql(text, params = []) {
        let n = 0;
        return (await store.pool.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as Row[];
      },
    };
  },
};

const id = (prefix: string) => `${prefix}-${randomUUID()}`;

const call = (callId: string, extra: Partial<InterruptCall> = {}): InterruptCall => ({
  call_id: callId,
  name: "refund_order",
  args: { order_id: "A-1001", amount_cents: 500 },
  policy: "approver",
  editable: true,
  args_schema: { type: "object" },
  args_hash: `plain-${callId}`,
  audit_hash: `keyed-${callId}`,
  version: 1,
  ...extra,
});

function interrupt(threadId: string, over: Partial<NewInterrupt> = {}): NewInterrupt {
  return {
    interrupt_id: id("i"),
    thread_id: threadId,
    run_id: id("r"),
    calls: [call("c1"), call("c2", { policy: "owner", editable: false })],
    questions: [],
    created_at: 1_700_000_000_000,
    expires_at: Date.now() + 60_000,
    requester: "alice",
    escalate_at: null,
    ...over,
  };
}

const ev = (seq: number, type: LoggedEvent["type"] = "token"): LoggedEvent => ({
  seq,
  type,
  // Tabs and newlines in the data: the log's own separators must not split it.
  data: JSON.stringify({ run_id: "r", text: `t${seq}\ttab\nnl` }),
});

/** The first notice on `channel` whose key is `key`; subscribed before it returns. */
function notice(bus: ReplicaBus, channel: NoticeChannel, key: string): Promise<string> {
  return new Promise((resolve) => {
    const off = bus.subscribe(channel, (k, payload) => {
      if (k !== key) return;
      off();
      resolve(payload);
    });
  });
}

/** Settled results of `n` concurrent calls: who won, who lost and with what. */
async function race<T>(n: number, fn: (i: number) => Promise<T>) {
  return Promise.allSettled(Array.from({ length: n }, (_, i) => fn(i)));
}

/**
 * A TCP pass-through to a database that can be cut (every connection dropped, new ones refused by
 * an immediate close) and restored: what a network partition does to one replica.
 */
async function tcpGate(target: string) {
  const { port, pathname } = new URL(target);
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = net.connect(Number(port), "127.0.0.1");
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(a);
      a.on("data", (d) => b.write(d));
      a.on("error", () => b.destroy());
      a.on("close", () => (sockets.delete(a), b.destroy()));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: gatePort } = server.address() as net.AddressInfo;
  const cut = () => {
    open = false;
    for (const s of sockets) s.destroy();
  };
  return {
    url: `postgres://postgres@127.0.0.1:${gatePort}${pathname}`,
    cut,
    restore: () => void (open = true),
    close: () => new Promise<void>((resolve) => (cut(), server.close(() => resolve()))),
  };
}

describe.each([sqlite, postgres])("the $name store", (backend) => {
  describe.skipIf(backend.skip)("conforms", () => {
    beforeAll(() => backend.setup(), 60_000);
    afterAll(async () => {
      await closeAll(); // before the cluster goes: a pool whose server vanished complains
      await backend.teardown();
    });

    describe("threads", () => {
      let db: Db;
      let s: Store;
      beforeAll(async () => {
        db = await backend.fresh();
        s = db.store;
      });

      it("creates once, ensures, titles once, and lists newest first by keyset", async () => {
        const t = id("t");
        expect(await s.threads.create(t, "alice", { metadata: { a: 1 } })).toBe(true);
        expect(await s.threads.create(t, "bob")).toBe(false);
        expect(await s.threads.get(t)).toMatchObject({ thread_id: t, owner: "alice", status: "idle", metadata: '{"a":1}', title: null });
        expect((await s.threads.ensure(t, "bob")).owner).toBe("alice");
        const u = id("t");
        expect(await s.threads.ensure(u, "bob")).toMatchObject({ thread_id: u, owner: "bob", status: "idle" });
        await s.threads.setTitle(t, "first");
        await s.threads.setTitle(t, "second");
        expect((await s.threads.get(t))!.title).toBe("first");
        expect(await s.threads.get(id("nope"))).toBeUndefined();

        const owner = id("o");
        const made: string[] = [];
        for (let i = 0; i < 5; i++) {
          made.push(id("t"));
          await s.threads.create(made[i]!, owner);
        }
        const all = await s.threads.list(owner, 10);
        expect(all.map((r) => r.thread_id).sort()).toEqual([...made].sort());
        for (let i = 1; i < all.length; i++) {
          const [a, b] = [all[i - 1]!, all[i]!];
          expect(a.updated_at > b.updated_at || (a.updated_at === b.updated_at && a.thread_id > b.thread_id)).toBe(true);
        }
        const page1 = await s.threads.list(owner, 2);
        const last = page1.at(-1)!;
        const page2 = await s.threads.list(owner, 10, { updatedAt: last.updated_at, threadId: last.thread_id });
        expect([...page1, ...page2].map((r) => r.thread_id)).toEqual(all.map((r) => r.thread_id));
        expect(typeof last.updated_at).toBe("number");
        // Owner null: every owner's threads.
        expect((await s.threads.list(null, 1000)).map((r) => r.thread_id)).toEqual(expect.arrayContaining([t, u, ...made]));
      });

      it("keeps the graph a thread was made with, 'agent' when none is named; ensure never changes it", async () => {
        const t = id("t");
        expect(await s.threads.create(t, "alice", { metadata: { a: 1 }, graphId: "research" })).toBe(true);
        expect(await s.threads.get(t)).toMatchObject({ thread_id: t, owner: "alice", metadata: '{"a":1}', graph_id: "research" });
        // The id is taken: the second create writes nothing, the graph included.
        expect(await s.threads.create(t, "alice", { graphId: "other" })).toBe(false);
        expect((await s.threads.get(t))!.graph_id).toBe("research");
        // ensure returns the thread as it is; comparing graphs is the caller's job.
        expect((await s.threads.ensure(t, "alice", "other")).graph_id).toBe("research");
        expect((await s.threads.ensure(t, "alice")).graph_id).toBe("research");
        expect((await s.threads.get(t))!.graph_id).toBe("research");

        const plain = id("t");
        await s.threads.create(plain, "alice");
        expect((await s.threads.get(plain))!.graph_id).toBe("agent");
        expect((await s.threads.ensure(id("t"), "bob")).graph_id).toBe("agent");
        const ensured = id("t");
        expect(await s.threads.ensure(ensured, "bob", "research")).toMatchObject({ thread_id: ensured, owner: "bob", graph_id: "research" });
        expect((await s.threads.list(null, 1000)).find((r) => r.thread_id === ensured)!.graph_id).toBe("research");
      });

      it("a database from before graph ids opens with its threads on 'agent', and takes new ones", async () => {
        const old = await backend.fresh();
        // Back to the previous schema: no graph_id column, and (PostgreSQL) version 3 recorded,
        // else migrate would find the database current and leave it alone. SQLite keeps no version.
        await old.sql("ALTER TABLE threads DROP COLUMN graph_id");
        await old.sql("UPDATE tollgate_meta SET value = '3' WHERE key = 'schema_version'");
        await old.sql("INSERT INTO threads (thread_id, owner, created_at, updated_at) VALUES ('before', 'alice', 1, 2)");
        const reopened = await old.open();
        expect(await reopened.threads.get("before")).toMatchObject({ thread_id: "before", owner: "alice", graph_id: "agent" });
        await reopened.threads.create("after", "alice", { graphId: "research" });
        expect((await reopened.threads.get("after"))!.graph_id).toBe("research");
      });

      it("claimIdle: of 20 concurrent claims exactly one wins; the others are refused as busy", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        const results = await race(20, (i) => s.threads.claimIdle(t, `run-${i}`));
        const won = results.flatMap((r, i) => (r.status === "fulfilled" && r.value.ok ? [i] : []));
        expect(won).toHaveLength(1);
        for (const [i, r] of results.entries()) if (i !== won[0]) expect(r).toEqual({ status: "fulfilled", value: { ok: false, reason: "busy" } });
        expect(await s.threads.get(t)).toMatchObject({
          status: "running",
          holder_id: `run-${won[0]}`,
          latest_run_id: `run-${won[0]}`,
          replica_id: s.replicas.id,
        });
        expect((await s.threads.listRunning()).map((r) => r.thread_id)).toContain(t);
      });

      it("claimIdle refuses an unknown thread, a waiting one and a running one, each with its reason, writing nothing", async () => {
        const nope = id("nope");
        expect(await s.threads.claimIdle(nope, "r")).toEqual({ ok: false, reason: "not_found" });
        expect(await s.threads.get(nope)).toBeUndefined();
        const t = id("t");
        await s.threads.create(t, "alice");
        expect(await s.threads.claimIdle(t, "r1")).toEqual({ ok: true });
        expect(await s.threads.claimIdle(t, "r2")).toEqual({ ok: false, reason: "busy" });
        expect((await s.threads.get(t))!.holder_id).toBe("r1");
        expect(await s.threads.release(t, "r1", { to: "waiting_human", lastOutcome: null, openInterruptId: "i1" })).toBe(true);
        expect(await s.threads.claimIdle(t, "r3")).toEqual({ ok: false, reason: "awaiting_approval" });
        expect((await s.threads.get(t))!.latest_run_id).toBe("r1");
      });

      it("claimWaiting: one of 20 wins; a closer keeps the latest run, a resume becomes it", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        await s.threads.claimIdle(t, "run-a");
        await s.threads.release(t, "run-a", { to: "waiting_human", lastOutcome: null, openInterruptId: "int-1" });
        const results = await race(20, (i) => s.threads.claimWaiting(t, `closer-${i}`, false));
        expect(results.filter((r) => r.status === "fulfilled" && r.value)).toHaveLength(1);
        const row = (await s.threads.get(t))!;
        expect(row).toMatchObject({ status: "running", latest_run_id: "run-a", open_interrupt_id: null, replica_id: s.replicas.id });
        expect(row.holder_id).toMatch(/^closer-/);

        expect(await s.threads.release(t, row.holder_id!, { to: "waiting_human", lastOutcome: null, openInterruptId: "int-2" })).toBe(true);
        expect(await s.threads.claimWaiting(t, "run-b", true)).toBe(true);
        expect(await s.threads.get(t)).toMatchObject({ holder_id: "run-b", latest_run_id: "run-b" });
        expect(await s.threads.claimWaiting(t, "run-c", true)).toBe(false); // running now, not waiting
      });

      it("release: only by the holder, once; the outcome is kept when none is given", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        await s.threads.claimIdle(t, "r1");
        expect(await s.threads.release(t, "someone-else", { to: "idle", lastOutcome: "completed" })).toBe(false);
        expect(await s.threads.release(t, "r1", { to: "idle", lastOutcome: "completed" })).toBe(true);
        expect(await s.threads.release(t, "r1", { to: "idle", lastOutcome: "error" })).toBe(false);
        expect(await s.threads.get(t)).toMatchObject({
          status: "idle",
          holder_id: null,
          replica_id: null,
          last_outcome: "completed",
          open_interrupt_id: null,
        });
        await s.threads.claimIdle(t, "r2");
        expect(await s.threads.release(t, "r2", { to: "waiting_human", lastOutcome: null, openInterruptId: "int-9" })).toBe(true);
        expect(await s.threads.get(t)).toMatchObject({ status: "waiting_human", last_outcome: "completed", open_interrupt_id: "int-9" });
      });
    });

    describe("thread copies", () => {
      let s: Store;
      beforeAll(async () => {
        s = (await backend.fresh()).store;
      });

      it("copy: an idle thread with its checkpoints, audit trail and ledger under the copy's keys, for a new owner; nothing when it is not idle or the id is taken", async () => {
        const from = id("t");
        await s.threads.create(from, "alice", { metadata: { a: 1 }, graphId: "research" });
        await s.threads.setTitle(from, "refund");
        const config = { configurable: { thread_id: from, checkpoint_ns: "" } };
        const checkpoint = { ...emptyCheckpoint(), channel_values: { note: "kept" }, channel_versions: { note: 1 } };
        const saved = await s.checkpointer.put(config, checkpoint, { source: "loop", step: 1, parents: {} } as never, { note: 1 });
        await s.checkpointer.putWrites(saved, [["note", "written"]], "task-1");
        const outcome = { status: "ok" as const, output: '{"refund_id":1}' };
        await s.ledger.claim(`${from}:settled`, { threadId: from, callId: "settled", name: "refund_order", argsHash: "h1" });
        await s.ledger.settle(`${from}:settled`, outcome);
        await s.ledger.claim(`${from}:doubt`, { threadId: from, callId: "doubt", name: "refund_order", argsHash: "h2" });
        const decision: AuditRecord = { thread_id: from, interrupt_id: "i1", call_id: "settled", tool: "refund_order", args_hash: s.audit.hash({ a: 1 }), decision: "approved", by: "ops", reason: null, at: 1_700_000_000_000 };
        await s.audit.append([decision, { ...decision, call_id: "doubt" }]);

        const to = id("t");
        expect(await s.threads.copy(from, to, "bob")).toBe(true);
        expect(await s.threads.get(to)).toMatchObject({ thread_id: to, owner: "bob", status: "idle", metadata: '{"a":1}', title: "refund", graph_id: "research", latest_run_id: null, open_interrupt_id: null });
        const copied = await s.checkpointer.getTuple({ configurable: { thread_id: to, checkpoint_ns: "" } });
        expect(copied!.checkpoint.id).toBe(checkpoint.id);
        expect(copied!.checkpoint.channel_values).toEqual({ note: "kept" });
        expect(copied!.pendingWrites).toEqual([["task-1", "note", "written"]]);
        // What ran on the original has run on the copy: a claim there finds it, and never runs it.
        expect(await s.ledger.claim(`${to}:settled`, { threadId: to, callId: "settled", name: "refund_order", argsHash: "h1" })).toEqual({ kind: "settled", outcome });
        expect(await s.ledger.claim(`${to}:doubt`, { threadId: to, callId: "doubt", name: "refund_order", argsHash: "h2" })).toEqual({ kind: "in_doubt" });
        expect((await s.audit.list(to)).map((r) => [r.call_id, r.decision])).toEqual([["settled", "approved"], ["doubt", "approved"]]);
        // The original is as it was.
        expect(await s.threads.get(from)).toMatchObject({ owner: "alice", status: "idle" });
        expect(await s.ledger.peek(`${from}:settled`)).toEqual({ kind: "settled", outcome });

        // Taken id, unknown source, a source not idle: nothing written.
        expect(await s.threads.copy(from, to, "bob")).toBe(false);
        const none = id("t");
        expect(await s.threads.copy(id("nope"), none, "bob")).toBe(false);
        expect(await s.threads.get(none)).toBeUndefined();
        await s.threads.claimIdle(from, "r1");
        expect(await s.threads.copy(from, none, "bob")).toBe(false);
        expect(await s.threads.get(none)).toBeUndefined();
        expect(await s.checkpointer.getTuple({ configurable: { thread_id: none, checkpoint_ns: "" } })).toBeUndefined();
        expect(await s.ledger.peek(`${none}:settled`)).toBeUndefined();
      });
    });

    describe("interrupts", () => {
      let s: Store;
      beforeAll(async () => {
        s = (await backend.fresh()).store;
      });

      it("keeps a record as it was made", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        const r = interrupt(t);
        await s.interrupts.create(r);
        expect(await s.interrupts.get(r.interrupt_id)).toMatchObject({ ...r, status: "waiting_human", decided_at: null });
        expect(await s.interrupts.get(id("nope"))).toBeUndefined();
      });

      it("keeps a graph's questions beside the calls, values as given; none is an empty list", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        const questions = [{ question_id: "q-1", value: { question: "Refund all three?", orders: ["A-1", "A-2"] } }];
        const asked = interrupt(t, { calls: [], questions });
        await s.interrupts.create(asked);
        expect((await s.interrupts.get(asked.interrupt_id))!.questions).toEqual(questions);
        const plain = interrupt(t);
        await s.interrupts.create(plain);
        expect((await s.interrupts.get(plain.interrupt_id))!.questions).toEqual([]);
      });

      it("transition: of 20 concurrent decisions exactly one wins, and its status stands", async () => {
        const r = interrupt(id("t"));
        await s.interrupts.create(r);
        const to = ["resumed", "rejected", "expired", "cancelled"] as const;
        const results = await race(20, (i) => s.interrupts.transition(r.interrupt_id, to[i % 4]!, { decisions: [{ call_id: "c1", approved: true }] }));
        const won = results.flatMap((x, i) => (x.status === "fulfilled" && x.value ? [i] : []));
        expect(won).toHaveLength(1);
        const rec = (await s.interrupts.get(r.interrupt_id))!;
        expect(rec.status).toBe(to[won[0]! % 4]);
        expect(typeof rec.decided_at).toBe("number");
      });

      it("escalations: due ones are listed until marked; of 20 concurrent marks exactly one wins; never for a closed or unescalated interrupt", async () => {
        const now = 1_700_000_100_000;
        const t = id("t");
        await s.threads.create(t, "alice");
        const due = interrupt(t, { escalate_at: now - 1, expires_at: now + 60_000 });
        const later = interrupt(t, { escalate_at: now + 1, expires_at: now + 60_000 });
        const never = interrupt(t, { escalate_at: null, expires_at: now + 60_000 });
        const past = interrupt(t, { escalate_at: now - 1, expires_at: now });
        const closed = interrupt(t, { escalate_at: now - 1, expires_at: now + 60_000 });
        for (const r of [due, later, never, past, closed]) await s.interrupts.create(r);
        await s.interrupts.transition(closed.interrupt_id, "rejected");
        const listed = (await s.interrupts.listDueEscalations(now)).map((r) => r.interrupt_id).filter((i) => [due, later, never, past, closed].some((r) => r.interrupt_id === i));
        expect(listed).toEqual([due.interrupt_id]);
        const results = await race(20, () => s.interrupts.markEscalated(due.interrupt_id, now));
        expect(results.filter((x) => x.status === "fulfilled" && x.value)).toHaveLength(1);
        expect(await s.interrupts.get(due.interrupt_id)).toMatchObject({ escalate_at: now - 1, escalated_at: now });
        expect((await s.interrupts.listDueEscalations(now)).some((r) => r.interrupt_id === due.interrupt_id)).toBe(false);
        expect(await s.interrupts.markEscalated(never.interrupt_id, now)).toBe(false);
        expect(await s.interrupts.markEscalated(closed.interrupt_id, now)).toBe(false);
      });

      it("recordProgress: of 20 concurrent writes read at the same count exactly one lands; none past the deadline or once closed; a reopen clears it", async () => {
        const r = interrupt(id("t"), { expires_at: 5_000 });
        await s.interrupts.create(r);
        const results = await race(20, (i) => s.interrupts.recordProgress(r.interrupt_id, { seenSeq: 0, progress: { c1: { approvals: [{ by: `p${i}`, at: 1 }] } }, before: 4_000 }));
        const won = results.flatMap((x, i) => (x.status === "fulfilled" && x.value ? [i] : []));
        expect(won).toHaveLength(1);
        expect(await s.interrupts.get(r.interrupt_id)).toMatchObject({ progress: { c1: { approvals: [{ by: `p${won[0]}` }] } }, progress_seq: 1 });
        expect(await s.interrupts.recordProgress(r.interrupt_id, { seenSeq: 0, progress: {}, before: 4_000 })).toBe(false);
        expect(await s.interrupts.recordProgress(r.interrupt_id, { seenSeq: 1, progress: {}, before: 5_000 })).toBe(false);
        expect(await s.interrupts.transition(r.interrupt_id, "resumed")).toBe(true);
        expect(await s.interrupts.recordProgress(r.interrupt_id, { seenSeq: 1, progress: {}, before: 4_000 })).toBe(false);
        expect(await s.interrupts.reopen(r.interrupt_id)).toBe(true);
        expect(await s.interrupts.get(r.interrupt_id)).toMatchObject({ status: "waiting_human", progress: {}, progress_seq: 2 });
      });

      it("transition with `before`: a decision does not win against the deadline", async () => {
        const r = interrupt(id("t"), { expires_at: 5_000 });
        await s.interrupts.create(r);
        expect(await s.interrupts.transition(r.interrupt_id, "resumed", { decisions: [], before: 5_000 })).toBe(false);
        expect(await s.interrupts.transition(r.interrupt_id, "resumed", { decisions: [], before: 5_001 })).toBe(false);
        expect((await s.interrupts.get(r.interrupt_id))!.status).toBe("waiting_human");
        expect(await s.interrupts.transition(r.interrupt_id, "resumed", { decisions: [], before: 4_999 })).toBe(true);
        // The closer records the expiry without `before`.
        const late = interrupt(id("t"), { expires_at: 5_000 });
        await s.interrupts.create(late);
        expect(await s.interrupts.transition(late.interrupt_id, "expired")).toBe(true);
      });

      it("reopen: a decision (not an expiry or cancel) goes back to waiting once", async () => {
        const r = interrupt(id("t"));
        await s.interrupts.create(r);
        expect(await s.interrupts.reopen(r.interrupt_id)).toBe(false);
        await s.interrupts.transition(r.interrupt_id, "rejected", { decisions: [] });
        expect(await s.interrupts.reopen(r.interrupt_id)).toBe(true);
        expect(await s.interrupts.reopen(r.interrupt_id)).toBe(false);
        expect(await s.interrupts.get(r.interrupt_id)).toMatchObject({ status: "waiting_human", decided_at: null });
        expect(await s.interrupts.transition(r.interrupt_id, "resumed", { decisions: [] })).toBe(true);
        const gone = interrupt(id("t"));
        await s.interrupts.create(gone);
        await s.interrupts.transition(gone.interrupt_id, "expired");
        expect(await s.interrupts.reopen(gone.interrupt_id)).toBe(false);
      });

      it("lists the expired and the open ones, soonest deadline first, open ones with their thread's owner", async () => {
        const { store } = await backend.fresh();
        const t = id("t");
        await store.threads.create(t, "carol");
        const now = 1_000_000;
        const a = interrupt(t, { expires_at: now - 10 });
        const b = interrupt(t, { expires_at: now });
        const c = interrupt(t, { expires_at: now + 20 });
        const d = interrupt(t, { expires_at: now + 10 });
        const decided = interrupt(t, { expires_at: now - 20 });
        for (const r of [a, b, c, d, decided]) await store.interrupts.create(r);
        await store.interrupts.transition(decided.interrupt_id, "rejected", { decisions: [] });
        expect((await store.interrupts.listExpired(now)).map((r) => r.interrupt_id)).toEqual([a.interrupt_id, b.interrupt_id]);
        const open = await store.interrupts.listOpen(now);
        expect(open.map((r) => r.interrupt_id)).toEqual([d.interrupt_id, c.interrupt_id]);
        expect(await store.interrupts.countOpen(now)).toBe(2);
        expect(open[0]).toMatchObject({ owner: "carol", requester: "alice", calls: d.calls });
      });
    });

    describe("ledger", () => {
      let db: Db;
      let s: Store;
      beforeAll(async () => {
        db = await backend.fresh();
        s = db.store;
      });
      const entry = (threadId: string, argsHash = "h1") => ({ threadId, callId: "c1", name: "refund_order", argsHash });

      it("claim: of 20 concurrent claims exactly one is `claimed`; the others find it in doubt", async () => {
        const t = id("t");
        const key = `${t}:c1`;
        const results = await Promise.all(Array.from({ length: 20 }, () => s.ledger.claim(key, entry(t))));
        expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
        expect(results.filter((r) => r.kind === "in_doubt")).toHaveLength(19);
        expect(await s.ledger.peek(key)).toEqual({ kind: "in_doubt" });
      });

      it("a call id claimed for other arguments is REUSED_CALL_ID, never a licence to run", async () => {
        const t = id("t");
        const key = `${t}:c1`;
        expect(await s.ledger.claim(key, entry(t, "h1"))).toEqual({ kind: "claimed" });
        expect(await s.ledger.claim(key, entry(t, "other"))).toEqual({ kind: "settled", outcome: REUSED_CALL_ID });
      });

      it("settle records the outcome: peek and a later claim answer it", async () => {
        const t = id("t");
        const key = `${t}:c1`;
        expect(await s.ledger.peek(key)).toBeUndefined();
        await s.ledger.claim(key, entry(t));
        const outcome = { status: "ok" as const, output: '{"refund_id":1}' };
        await s.ledger.settle(key, outcome);
        expect(await s.ledger.peek(key)).toEqual({ kind: "settled", outcome });
        expect(await s.ledger.claim(key, entry(t))).toEqual({ kind: "settled", outcome });
        // In the database, not only in this process; and a second settle does not overwrite what ran.
        await s.ledger.settle(key, { status: "error", error: "late" });
        expect(await (await db.open()).ledger.peek(key)).toEqual({ kind: "settled", outcome });
      });

      it("a claim for a run is refused (NOT_HOLDER, nothing written) unless that run holds the thread on this replica", async () => {
        const t = id("t");
        const key = `${t}:c1`;
        await s.threads.create(t, "alice");
        expect(await s.ledger.claim(key, { ...entry(t), runId: "r1" })).toEqual({ kind: "settled", outcome: NOT_HOLDER }); // idle
        await s.threads.claimIdle(t, "r1");
        expect(await s.ledger.claim(key, { ...entry(t), runId: "r2" })).toEqual({ kind: "settled", outcome: NOT_HOLDER }); // another run's
        // Taken over by another replica (this one was cut off past its lease): refused too.
        await db.sql("UPDATE threads SET replica_id = ? WHERE thread_id = ?", ["a-survivor", t]);
        expect(await s.ledger.claim(key, { ...entry(t), runId: "r1" })).toEqual({ kind: "settled", outcome: NOT_HOLDER });
        expect(await s.ledger.peek(key)).toBeUndefined();
        await db.sql("UPDATE threads SET replica_id = ? WHERE thread_id = ?", [s.replicas.id, t]);
        expect(await s.ledger.claim(key, { ...entry(t), runId: "r1" })).toEqual({ kind: "claimed" });
      });
    });

    describe("runs", () => {
      let s: Store;
      beforeAll(async () => {
        s = (await backend.fresh()).store;
      });

      it("keeps events in batches and reads any suffix back, gaps included, for several runs in one append", async () => {
        const [a, b] = [id("r"), id("r")];
        await s.runs.appendBatches(new Map([[a, [ev(0), ev(1), ev(2)]], [b, [ev(0)]]]));
        await s.runs.append(a, [ev(3), ev(4), ev(300, "error")]); // recovery numbers past a gap
        expect((await s.runs.read(a, -1)).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 300]);
        expect((await s.runs.read(a, 1)).map((e) => e.seq)).toEqual([2, 3, 4, 300]);
        expect(await s.runs.read(a, 4)).toEqual([ev(300, "error")]);
        expect(await s.runs.read(a, 300)).toEqual([]);
        expect((await s.runs.read(a, -1))[1]).toEqual(ev(1));
        expect(await s.runs.read(b, -1)).toEqual([ev(0)]);
        expect(await s.runs.maxSeq(a)).toBe(300);
        expect(await s.runs.maxSeq(id("none"))).toBe(-1);
        expect(await s.runs.hasTerminal(a)).toBe(true);
        expect(await s.runs.hasTerminal(b)).toBe(false);
        expect(await s.runs.hasTerminal(id("none"))).toBe(false);
      });

      it("an append retried after an unknown outcome writes nothing twice", async () => {
        const r = id("r");
        await s.runs.append(r, [ev(0), ev(1)]);
        await s.runs.append(r, [ev(0), ev(1)]);
        expect((await s.runs.read(r, -1)).map((e) => e.seq)).toEqual([0, 1]);
      });

      it("a batch retried with later events merged in keeps every event once (its first write did commit)", async () => {
        const r = id("r");
        await s.runs.append(r, [ev(0), ev(1)]);
        await s.runs.append(r, [ev(2), ev(3)]); // committed, though its writer heard it failed
        await s.runs.append(r, [ev(2), ev(3), ev(4), ev(5)]); // the retry, with what came since
        expect((await s.runs.read(r, -1)).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
        await s.runs.append(r, [ev(2), ev(3)]); // a stale shorter retry changes nothing
        expect((await s.runs.read(r, 1)).map((e) => e.seq)).toEqual([2, 3, 4, 5]);
      });

      it("end closes a run once: the second settler learns it lost", async () => {
        const [t, r] = [id("t"), id("r")];
        await s.runs.start(r, t, { kind: "message", input: '{"id":"m1","content":"hello"}' });
        // The user's message is kept with the run: checkpoints come only at its end.
        expect(await s.runs.get(r)).toEqual({ run_id: r, thread_id: t, started_at: expect.any(Number), ended_at: null, outcome: null, input: '{"id":"m1","content":"hello"}', ordinal: 1 });
        expect(await s.runs.end(r, "completed")).toBe(true);
        expect(await s.runs.end(r, "error")).toBe(false);
        const row = (await s.runs.get(r))!;
        expect(row.outcome).toBe("completed");
        expect(typeof row.ended_at).toBe("number");
        expect(await s.runs.get(id("none"))).toBeUndefined();
      });

      it("listForThread: a thread's runs newest first, paged; no other thread's", async () => {
        let now = Date.UTC(2031, 0, 1);
        const st = await (await backend.fresh()).open({ clock: { now: () => now } });
        const [t, other] = [id("t"), id("t")];
        const runs = [id("r"), id("r"), id("r")];
        for (const r of runs) {
          await st.runs.start(r, t, { kind: "message" });
          now += 1000;
        }
        await st.runs.start(id("r"), other, { kind: "message" });
        expect((await st.runs.listForThread(t, 10, 0)).map((r) => r.run_id)).toEqual([...runs].reverse());
        expect((await st.runs.listForThread(t, 1, 1)).map((r) => r.run_id)).toEqual([runs[1]]);
        expect(await st.runs.listForThread(id("none"), 10, 0)).toEqual([]);
      });

      it("numbers a thread's runs 1, 2, 3 in the order they start, whatever the clock says: a thread stream's seq counts on it", async () => {
        const st = await (await backend.fresh()).open({ clock: { now: () => Date.UTC(2031, 0, 1) } });
        const [t, other] = [id("t"), id("t")];
        const runs = [id("r"), id("r"), id("r")];
        for (const r of runs) await st.runs.start(r, t, { kind: "message" });
        await st.runs.start(id("r"), other, { kind: "resume" });
        expect(await Promise.all(runs.map(async (r) => (await st.runs.get(r))!.ordinal))).toEqual([1, 2, 3]);
        // Newest first by that number, though all three started in the same millisecond.
        expect((await st.runs.listForThread(t, 10, 0)).map((r) => r.run_id)).toEqual([...runs].reverse());
        expect((await st.runs.listForThread(other, 10, 0))[0]!.ordinal).toBe(1);
      });

      it("listUnheld: open runs that no running thread holds", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        const [held, orphan, ended] = [id("r"), id("r"), id("r")];
        for (const r of [held, orphan, ended]) await s.runs.start(r, t, { kind: "message" });
        await s.threads.claimIdle(t, held);
        await s.runs.end(ended, "completed");
        const unheld = (await s.runs.listUnheld()).filter((r) => r.thread_id === t);
        expect(unheld).toEqual([{ run_id: orphan, thread_id: t }]);
        await s.threads.release(t, held, { to: "idle", lastOutcome: "completed" });
        expect((await s.runs.listUnheld()).filter((r) => r.thread_id === t).map((r) => r.run_id).sort()).toEqual([held, orphan].sort());
      });

      it("prune keeps the logs of the `keep` latest finished runs and of open ones", async () => {
        const t = id("t");
        const runs = [id("r"), id("r"), id("r"), id("r")];
        for (const r of runs) {
          await s.runs.start(r, t, { kind: "message" });
          await s.runs.append(r, [ev(0), ev(1, "done")]);
        }
        for (const r of runs.slice(0, 3)) await s.runs.end(r, "completed");
        await s.runs.prune(t, 1);
        const kept = await Promise.all(runs.map(async (r) => (await s.runs.read(r, -1)).length > 0));
        expect(kept[3]).toBe(true); // still open
        expect(kept.slice(0, 3).filter(Boolean)).toHaveLength(1);
        await s.runs.prune(t, 0);
        expect(await Promise.all(runs.map(async (r) => (await s.runs.read(r, -1)).length > 0))).toEqual([false, false, false, true]);
        // The runs themselves stay: a replay of a pruned run finds it ended, with no events.
        expect((await s.runs.get(runs[0]!))!.outcome).toBe("completed");
      });
    });

    describe("audit", () => {
      let db: Db;
      let s: Store;
      beforeAll(async () => {
        db = await backend.fresh();
        s = db.store;
      });
      const record = (t: string, over: Partial<AuditRecord> = {}): AuditRecord => ({
        thread_id: t,
        interrupt_id: "i1",
        call_id: "c1",
        tool: "refund_order",
        args_hash: s.audit.hash({ amount_cents: 5 }),
        decision: "approved",
        by: "ops",
        reason: null,
        at: 1_700_000_000_000,
        ...over,
      });

      it("lists a thread's decisions oldest first, the last decision per call joined with its execution", async () => {
        const t = id("t");
        const ledgerHash = "plain-args";
        await s.audit.append([
          record(t, { decision: "approved", run_args_hash: ledgerHash }), // voided below, made again
          record(t, { call_id: "c2", decision: "rejected", by: "ops", reason: "no" }),
        ]);
        await s.audit.append([
          record(t, { decision: "edited", edited_args_hash: "e1", run_args_hash: ledgerHash, at: 1_700_000_001_000 }),
        ]);
        await s.audit.append([record(id("t"))]); // another thread's
        await s.ledger.claim(`${t}:c1`, { threadId: t, callId: "c1", name: "refund_order", argsHash: ledgerHash });
        let entries = await s.audit.list(t);
        expect(entries.map((e) => [e.call_id, e.decision])).toEqual([
          ["c1", "approved"],
          ["c2", "rejected"],
          ["c1", "edited"],
        ]);
        expect(entries[0]!.executed).toBeUndefined();
        expect(entries[1]).toMatchObject({ by: "ops", reason: "no", at: 1_700_000_000_000 });
        expect(entries[2]).toMatchObject({ edited_args_hash: "e1", executed: { status: "unknown" } });
        await s.ledger.settle(`${t}:c1`, { status: "ok", output: "{}" });
        entries = await s.audit.list(t);
        expect(entries[2]!.executed!.status).toBe("ok");
      });

      it("appendForEachCall writes one row per pending call", async () => {
        const t = id("t");
        const r = { ...interrupt(t), status: "expired" as const, decided_at: 1, escalated_at: null, progress: {}, progress_seq: 0 };
        await s.audit.appendForEachCall(r, { decision: "expired", by: null, reason: "ttl" }, 1_700_000_000_000);
        expect(await s.audit.list(t)).toEqual([
          expect.objectContaining({ call_id: "c1", args_hash: "keyed-c1", decision: "expired", by: null, reason: "ttl" }),
          expect.objectContaining({ call_id: "c2", args_hash: "keyed-c2", decision: "expired", by: null, reason: "ttl" }),
        ]);
      });

      it("decidedBy: whether someone decided on the thread", async () => {
        const t = id("t");
        await s.audit.append([record(t, { by: "vera" })]);
        expect(await s.audit.decidedBy(t, "vera")).toBe(true);
        expect(await s.audit.decidedBy(t, "ops")).toBe(false);
        expect(await s.audit.decidedBy(id("t"), "vera")).toBe(false);
      });

      it("the database itself refuses to change or delete a row", async () => {
        const t = id("t");
        await s.audit.append([record(t)]);
        await expect(db.sql("UPDATE audit SET decision = 'rejected' WHERE thread_id = ?", [t])).rejects.toThrow(/immutable/);
        await expect(db.sql("DELETE FROM audit WHERE thread_id = ?", [t])).rejects.toThrow(/immutable/);
        expect((await s.audit.list(t)).map((e) => e.decision)).toEqual(["approved"]);
      });

      it("hashes under one key per database, the same in every store opened on it, insensitive to key order", async () => {
        const other = await db.open();
        expect(other.audit.hash({ b: "x", a: 1 })).toBe(s.audit.hash({ a: 1, b: "x" }));
        const elsewhere = (await backend.fresh()).store;
        expect(elsewhere.audit.hash({ a: 1, b: "x" })).not.toBe(s.audit.hash({ a: 1, b: "x" }));
      });
    });

    describe("transactions", () => {
      let s: Store;
      beforeAll(async () => {
        s = (await backend.fresh()).store;
      });

      it("commits all of fn's writes and returns its value", async () => {
        const t = id("t");
        const value = await s.transaction(async (tx) => {
          await tx.threads.create(t, "alice");
          await tx.threads.claimIdle(t, "r1");
          // Reads inside see the transaction's own writes.
          return (await tx.threads.get(t))!.status;
        });
        expect(value).toBe("running");
        expect((await s.threads.get(t))!.holder_id).toBe("r1");
      });

      it("rolls back everything when fn throws, and rethrows", async () => {
        const [t, r, i] = [id("t"), id("r"), interrupt(id("x"))];
        const boom = new Error("boom");
        await expect(
          s.transaction(async (tx) => {
            await tx.threads.create(t, "alice");
            await tx.runs.start(r, t, { kind: "message" });
            await tx.runs.append(r, [ev(0)]);
            await tx.interrupts.create({ ...i, thread_id: t });
            await tx.audit.append([
              { thread_id: t, interrupt_id: i.interrupt_id, call_id: "c1", tool: "x", args_hash: "h", decision: "approved", by: "o", reason: null, at: 1 },
            ]);
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await s.threads.get(t)).toBeUndefined();
        expect(await s.runs.get(r)).toBeUndefined();
        expect(await s.runs.read(r, -1)).toEqual([]);
        expect(await s.interrupts.get(i.interrupt_id)).toBeUndefined();
        expect(await s.audit.list(t)).toEqual([]);
      });

      it("a compare-and-set lost inside a transaction undoes its earlier writes once the caller throws", async () => {
        const t = id("t");
        await s.threads.create(t, "alice");
        await s.threads.claimIdle(t, "r1");
        const i = interrupt(t);
        const lost = new Error("lost the claim");
        await expect(
          s.transaction(async (tx) => {
            await tx.interrupts.create(i);
            if (!(await tx.threads.claimIdle(t, "r2")).ok) throw lost;
          }),
        ).rejects.toBe(lost);
        expect(await s.interrupts.get(i.interrupt_id)).toBeUndefined();
      });

      it("answers readable() while the database is there", async () => {
        expect(await s.readable()).toBe(true);
      });
    });

    describe("secrets", () => {
      // A configured key, and one that is also a JSON literal: scrubbing must keep stored JSON valid.
      const KEY = "sk-conf-ABCDEFGH12345678";
      const scrub: SecretFilter = createSecretScrubber([KEY, "true"]);
      let db: Db;
      let s: Store;
      beforeAll(async () => {
        db = await backend.fresh();
        s = await db.open({ scrub });
      });
      /** Every checkpoint, metadata, blob and write as the database holds it. */
      const checkpointRows = async () =>
        (backend.name === "sqlite"
          ? await db.sql("SELECT CAST(checkpoint AS TEXT) || CAST(metadata AS TEXT) AS v FROM checkpoints UNION ALL SELECT CAST(value AS TEXT) FROM writes")
          : await db.sql(
              `SELECT checkpoint::text || metadata::text AS v FROM checkpoints UNION ALL SELECT convert_from(blob, 'UTF8') FROM checkpoint_blobs WHERE blob IS NOT NULL
               UNION ALL SELECT convert_from(blob, 'UTF8') FROM checkpoint_writes`,
            )
        ).map((r) => String(r.v));

      it("a ledger outcome echoing a key is stored scrubbed, and reads back as stored", async () => {
        const t = id("t");
        const key = `${t}:c1`;
        await s.ledger.claim(key, { threadId: t, callId: "c1", name: "refund_order", argsHash: "h1" });
        await s.ledger.settle(key, { status: "error", error: `upstream: Incorrect API key provided: ${KEY}`, output: '{"ok":true}' });
        const [row] = await db.sql("SELECT outcome FROM ledger WHERE key = ?", [key]);
        expect(String(row!.outcome)).not.toContain(KEY);
        expect(await (await db.open()).ledger.peek(key)).toEqual({
          kind: "settled",
          outcome: { status: "error", error: "upstream: Incorrect API key provided: ***", output: '{"ok":***}' },
        });
      });

      it("checkpoints and their writes (a failed node's __error__ included) are stored scrubbed, as valid JSON", async () => {
        const config = { configurable: { thread_id: id("t"), checkpoint_ns: "" } };
        // A tool call's arguments are bound to its approval: only a configured secret is cut from them,
        // never words that merely look like a credential.
        const lookalike = "Authorization: granted";
        const call = {
          tool_calls: [{ id: "sk-call-00000001", name: "send_email", args: { body: lookalike, leak: KEY }, function: { arguments: `{"body":"${lookalike}"}` } }],
          text: lookalike,
          headers: { authorization: "abc123tok" },
        };
        const checkpoint = { ...emptyCheckpoint(), channel_values: { note: `key ${KEY}`, flag: true, call }, channel_versions: { note: 1, flag: 1, call: 1 } };
        const saved = await s.checkpointer.put(config, checkpoint, { source: "loop", step: 1, parents: {}, note: KEY } as never, { note: 1, flag: 1, call: 1 });
        await s.checkpointer.putWrites(saved, [[ERROR, { message: `401 Incorrect API key provided: ${KEY}`, name: "AuthenticationError" }]], "task-1");
        const rows = await checkpointRows();
        expect(rows.length).toBeGreaterThan(0);
        for (const v of rows) expect(v).not.toContain(KEY);
        const tuple = await s.checkpointer.getTuple(saved);
        // What was stored scrubbed reads back scrubbed; the literal `true` is no string, and stays JSON.
        expect(tuple!.checkpoint.channel_values).toEqual({
          note: "key ***",
          flag: true,
          call: {
            // An id shaped like a key stays: ids key the ledger and the decisions.
            tool_calls: [{ id: "sk-call-00000001", name: "send_email", args: { body: lookalike, leak: "***" }, function: { arguments: `{"body":"${lookalike}"}` } }],
            text: "Authorization: ***",
            headers: { authorization: "***" },
          },
        });
        expect(tuple!.pendingWrites).toEqual([["task-1", ERROR, { message: "401 Incorrect API key provided: ***", name: "AuthenticationError" }]]);
      });

      it("a store opened without a scrub stores what it is given", async () => {
        const t = id("t");
        await db.store.ledger.claim(`${t}:c1`, { threadId: t, callId: "c1", name: "refund_order", argsHash: "h1" });
        await db.store.ledger.settle(`${t}:c1`, { status: "error", error: KEY });
        const [row] = await db.sql("SELECT outcome FROM ledger WHERE key = ?", [`${t}:c1`]);
        expect(String(row!.outcome)).toContain(KEY);
      });
    });

    describe("clock", () => {
      it("stamps every row with the clock it was opened with, not the system's", async () => {
        const db = await backend.fresh();
        const at = Date.UTC(2031, 5, 1);
        const s = await db.open({ clock: { now: () => at } });
        const [t, r] = [id("t"), id("r")];
        await s.threads.create(t, "alice");
        expect(await s.threads.claimIdle(t, r)).toEqual({ ok: true });
        await s.runs.start(r, t, { kind: "message" });
        expect(await s.runs.end(r, "completed")).toBe(true);
        const i = interrupt(t, { run_id: r });
        await s.interrupts.create(i);
        expect(await s.interrupts.transition(i.interrupt_id, "expired")).toBe(true);
        await s.audit.appendForEachCall((await s.interrupts.get(i.interrupt_id))!, { decision: "expired", by: null, reason: null });
        await s.ledger.claim(`${t}:c1`, { threadId: t, callId: "c1", name: "refund_order", argsHash: "h1" });
        await s.ledger.settle(`${t}:c1`, { status: "ok", output: "{}" });
        const stamps = async () =>
          (
            await db.sql(
              `SELECT created_at AS v FROM threads WHERE thread_id = ? UNION ALL SELECT updated_at FROM threads WHERE thread_id = ?
               UNION ALL SELECT started_at FROM runs WHERE run_id = ? UNION ALL SELECT ended_at FROM runs WHERE run_id = ?
               UNION ALL SELECT decided_at FROM interrupts WHERE interrupt_id = ? UNION ALL SELECT at FROM audit WHERE interrupt_id = ?
               UNION ALL SELECT started_at FROM ledger WHERE key = ? UNION ALL SELECT settled_at FROM ledger WHERE key = ?`,
              [t, t, r, r, i.interrupt_id, i.interrupt_id, `${t}:c1`, `${t}:c1`],
            )
          ).map((row) => Number(row.v));
        // The ledger's outcome may land after settle() returns (it never waits on a slow database).
        await vi.waitFor(async () => expect(await stamps()).toEqual(Array(2 + 2 + 1 + i.calls.length + 2).fill(at)));
      });
    });

    describe("replicas", () => {
      let db: Db;
      let s: Store;
      beforeAll(async () => {
        db = await backend.fresh();
        s = db.store;
      });

      /** A thread `running` under a replica that is gone (its process died). */
      async function leftBehind(dead: string | null) {
        const t = id("t");
        const holder = id("r");
        await s.threads.create(t, "alice");
        await s.threads.claimIdle(t, holder);
        await db.sql("UPDATE threads SET replica_id = ? WHERE thread_id = ?", [dead, t]);
        return { t, holder };
      }

      it("lists a dead replica's threads and lets exactly one survivor adopt each", async () => {
        const now = Date.now();
        const other = backend.replicated ? await db.open() : s;
        const stores = [s, other];
        const survivors = stores.map((st) => st.replicas);
        for (const r of survivors) await r.heartbeat(now, 60_000);
        const { t, holder } = await leftBehind("dead-replica");
        const orphaned = await s.replicas.listOrphaned(now);
        expect(orphaned.map((r) => r.thread_id)).toContain(t);
        expect(orphaned.find((r) => r.thread_id === t)).toMatchObject({ holder_id: holder, replica_id: "dead-replica" });

        const results = await race(20, (i) => survivors[i % 2]!.adopt(t, holder, "dead-replica"));
        const won = results.flatMap((r, i) => (r.status === "fulfilled" && r.value ? [i] : []));
        expect(won).toHaveLength(1);
        const winner = survivors[won[0]! % 2]!;
        expect(await s.threads.get(t)).toMatchObject({ status: "running", holder_id: holder, replica_id: winner.id });
        expect((await s.replicas.listOrphaned(now)).map((r) => r.thread_id)).not.toContain(t);
        // The winner holds it now: a late release from elsewhere (the dead replica come back) fails.
        if (backend.replicated) expect(await stores[(won[0]! + 1) % 2]!.threads.release(t, holder, { to: "idle", lastOutcome: "error" })).toBe(false);
        expect(await stores[won[0]! % 2]!.threads.release(t, holder, { to: "idle", lastOutcome: "error" })).toBe(true);
      });

      it("adopt is a compare-and-set on holder and replica, a thread from before replicas included", async () => {
        const { t, holder } = await leftBehind(null);
        expect((await s.replicas.listOrphaned(Date.now())).map((r) => r.thread_id)).toContain(t);
        expect(await s.replicas.adopt(t, "another-holder", null)).toBe(false);
        expect(await s.replicas.adopt(t, holder, "not-its-replica")).toBe(false);
        expect(await s.replicas.adopt(t, holder, null)).toBe(true);
        expect(await s.replicas.adopt(t, holder, null)).toBe(false);
        await s.threads.release(t, holder, { to: "idle", lastOutcome: null });
        expect(await s.replicas.adopt(t, holder, s.replicas.id)).toBe(false); // not running any more
      });

      describe.skipIf(!backend.replicated)("leases", () => {
        it("a thread is orphaned exactly when its replica's lease has run out on the database's clock, or the replica retired; never for its own replica", async () => {
          const other = await db.open();
          const t = id("t");
          await other.threads.create(t, "alice");
          await other.threads.claimIdle(t, "r1");
          const orphaned = async (by = s) => (await by.replicas.listOrphaned(Date.now())).some((r) => r.thread_id === t);
          expect(await orphaned()).toBe(true); // never renewed: no lease
          // The caller's clock is not the one leases are read on: replicas' clocks may disagree.
          await other.replicas.heartbeat(0, 60_000);
          expect(await orphaned()).toBe(false);
          await other.replicas.heartbeat(Date.now() + 3_600_000, -1); // a lease already over, from a clock an hour fast
          expect(await orphaned()).toBe(true);
          await other.replicas.heartbeat(0, 60_000); // renewed
          expect(await orphaned()).toBe(false);
          await other.replicas.retire();
          expect(await orphaned()).toBe(true);
          // A replica never counts its own threads orphaned, whatever its lease says: they are alive while it asks.
          expect(await orphaned(other)).toBe(false);
          // Listed while lapsed, renewed since: adopt reads the lease again and leaves it.
          await other.replicas.heartbeat(0, 60_000);
          expect(await s.replicas.adopt(t, "r1", other.replicas.id)).toBe(false);
          await other.replicas.retire();
          expect(await s.replicas.adopt(t, "r1", other.replicas.id)).toBe(true);
          expect(other.replicas.id).not.toBe(s.replicas.id);
        });

        it("replicas starting together on an empty database migrate once and agree on the audit key", async () => {
          const url = await cluster!.createDatabase();
          const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(url).then(track)));
          const hashes = new Set(stores.map((st) => st.audit.hash({ a: 1 })));
          expect(hashes.size).toBe(1);
          expect(new Set(stores.map((st) => st.replicas.id)).size).toBe(3);
        });
      });
    });

    describe("bus", () => {
      let db: Db;
      let s: Store;
      beforeAll(async () => {
        db = await backend.fresh();
        s = db.store;
      });

      it("delivers a published notice, payload intact, to subscribers on every replica, the sender's included", async () => {
        const other = backend.replicated ? await db.open() : s;
        expect(s.bus.connected).toBe(true);
        const key = id("run");
        const there = notice(other.bus, "cancel", key);
        const here = notice(s.bus, "cancel", key);
        await s.bus.publish("cancel", key, "by\tops");
        expect(await there).toBe("by\tops");
        expect(await here).toBe("by\tops");
        const bare = id("run");
        const got = notice(other.bus, "cancel", bare);
        await s.bus.publish("cancel", bare);
        expect(await got).toBe("");
      });

      it("keeps channels apart and stops delivering after unsubscribe", async () => {
        const seen: string[] = [];
        const [a, b] = [id("k"), id("k")];
        // Only this test's keys: an earlier test's notice may still be on its way to this replica.
        const mine = (k: string) => k === a || k === b;
        const off = s.bus.subscribe("run_events", (k) => mine(k) && seen.push(`run_events:${k}`));
        const offCancel = s.bus.subscribe("cancel", (k) => mine(k) && seen.push(`cancel:${k}`));
        const first = notice(s.bus, "cancel", a);
        await s.bus.publish("cancel", a);
        await first;
        off();
        offCancel();
        const second = notice(s.bus, "cancel", b);
        await s.bus.publish("cancel", b);
        await second;
        expect(seen).toEqual([`cancel:${a}`]);
      });

      it("appendBatches sends a run_events notice per run, after which the events are there to read", async () => {
        const other = backend.replicated ? await db.open() : s;
        const [a, b] = [id("r"), id("r")];
        const read = (runId: string) =>
          new Promise<LoggedEvent[]>((resolve, reject) => {
            const off = other.bus.subscribe("run_events", (k) => {
              if (k !== runId) return;
              off();
              other.runs.read(runId, -1).then(resolve, reject);
            });
          });
        const [gotA, gotB] = [read(a), read(b)];
        await s.runs.appendBatches(new Map([[a, [ev(0), ev(1)]], [b, [ev(0)]]]));
        expect((await gotA).map((e) => e.seq)).toEqual([0, 1]);
        expect((await gotB).map((e) => e.seq)).toEqual([0]);
      });

      describe.skipIf(!backend.replicated)("between replicas", () => {
        it("an append rolled back sends no notice (notices go out on commit)", async () => {
          const other = await db.open();
          const [lost, marker] = [id("r"), id("r")];
          const seen: string[] = [];
          const off = other.bus.subscribe("run_events", (k) => (k === lost || k === marker) && seen.push(k));
          const markerSeen = notice(other.bus, "run_events", marker);
          await expect(
            s.transaction(async (tx) => {
              await tx.runs.append(lost, [ev(0)]);
              throw new Error("rolled back");
            }),
          ).rejects.toThrow("rolled back");
          // Notices arrive in commit order: once the later one is in, the earlier one would have been.
          await s.runs.append(marker, [ev(0)]);
          await markerSeen;
          off();
          expect(seen).toEqual([marker]);
        });

        it("a listener whose connection drops says so, comes back, and hears notices again", async () => {
          const errors: string[] = [];
          const other = (await db.open({ onError: (msg) => errors.push(msg) })) as PostgresStore;
          const { rows } = await other.pool.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'tollgate-bus' AND datname = current_database()",
          );
          expect(rows.length).toBeGreaterThan(0);
          for (const { pid } of rows) await other.pool.query("SELECT pg_terminate_backend($1)", [pid]);
          await vi.waitFor(() => expect(errors.some((m) => /listening connection lost/.test(m))).toBe(true), { timeout: 10_000 });
          await vi.waitFor(() => expect(other.bus.connected).toBe(true), { timeout: 10_000 });
          const key = id("k");
          const got = notice(other.bus, "cancel", key);
          await s.bus.publish("cancel", key, "again");
          expect(await got).toBe("again");
        });
      });
    });

    describe.skipIf(!backend.replicated)("outages", () => {
      it("readable() answers false, without throwing, while the database cannot be reached", async () => {
        const gate = await tcpGate(await cluster!.createDatabase());
        const victim = track(await openPostgresStore(gate.url, { onError: () => undefined })); // the cut is reported: expected
        expect(await victim.readable()).toBe(true);
        gate.cut();
        expect(await victim.readable()).toBe(false);
        gate.restore();
        expect(await victim.readable()).toBe(true);
        await gate.close();
      });

      it("settle does not reject while the database is unreachable: peek answers from memory, the write lands later", async () => {
        const url = await cluster!.createDatabase();
        const gate = await tcpGate(url);
        const victim = track(await openPostgresStore(gate.url, { onError: () => undefined })); // the cut is reported: expected
        const key = "t:c1";
        await victim.ledger.claim(key, { threadId: "t", callId: "c1", name: "refund_order", argsHash: "h" });
        const outcome = { status: "ok" as const, output: "{}" };
        gate.cut();
        await victim.ledger.settle(key, outcome);
        expect(await victim.ledger.peek(key)).toEqual({ kind: "settled", outcome });
        const elsewhere = track(await openPostgresStore(url));
        expect(await elsewhere.ledger.peek(key)).toEqual({ kind: "in_doubt" });
        gate.restore();
        await vi.waitFor(async () => expect(await elsewhere.ledger.peek(key)).toEqual({ kind: "settled", outcome }), { timeout: 15_000 });
        await gate.close();
      });
    });
  });
});
