import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { ProtocolEvent } from "../../src/protocol/index.js";
import { type FakeOpenAI, type FakeOpenAIOptions, startFakeOpenAI } from "../helpers/fake-openai.js";
import { assertPostgresAvailable, type PgCluster, skipPostgresSuite, startPostgres } from "../helpers/postgres.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { call, expectNoStackTraces, expectOneTerminal, only, terminal, threadId, toolMessagesSeen } from "./support.js";

// Three tollgate processes on one PostgreSQL database (DATABASE_URL), each rule of the contract
// held across them: single flight and the gate, cancel, stream follow, expiry, and a replica
// killed mid-call. The replicas are real child processes; the model is the fake OpenAI server.

const skip = skipPostgresSuite("replicas");

/** N replicas on a fresh database, sharing one fake model, plus a connection for assertions. */
interface Fleet {
  servers: ServerProcess[];
  clients: TollgateClient[];
  model: FakeOpenAI;
  db: pg.Pool;
  stop(): Promise<void>;
}

let cluster: PgCluster;
const fleets: Fleet[] = [];

async function fleet(env: Record<string, string> = {}, modelOpts: FakeOpenAIOptions = {}, n = 3): Promise<Fleet> {
  const url = await cluster.createDatabase();
  const model = await startFakeOpenAI(modelOpts);
  // Started together: their migrations race, as they would behind a load balancer.
  const servers = await Promise.all(
    Array.from({ length: n }, () =>
      startServer({ MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url, TOLLGATE_TEST_TOOLS: "1", DATABASE_URL: url, ...env }),
    ),
  );
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on("error", () => {}); // its idle connections die when a test takes the database down
  const f: Fleet = {
    servers,
    clients: servers.map((s) => new TollgateClient({ baseUrl: s.url, reconnect: { retries: 0 } })),
    model,
    db,
    async stop() {
      if (process.env.REPLICAS_DEBUG) for (const s of servers) console.log(`--- ${s.url}\n${s.stdout()}\n${s.stderr()}`);
      await Promise.all(servers.map((s) => s.kill()));
      await db.end();
      await model.close();
    },
  };
  fleets.push(f);
  return f;
}

const refundTurn = (id: string, tool = "refund_order", args: object = { order_id: "A-1002", amount_cents: 200, reason: "r" }) => ({
  toolCalls: [{ id, name: tool, args }],
});

async function rows<T = Record<string, unknown>>(db: pg.Pool, sql: string, ...params: unknown[]): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

/** Resolves once `cond` holds; for state other processes write, where there is no event to await. */
async function until(cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(skip)("three replicas on one PostgreSQL", () => {
  beforeAll(async () => {
    assertPostgresAvailable();
    cluster = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(fleets.map((f) => f.stop()));
    await cluster?.stop();
  });

  it("single flight and the gate: of 20 resumes spread over the replicas one opens the gate and the refund runs once; of 20 messages one runs", async () => {
    const f = await fleet();
    const [a, b, c] = f.clients as [TollgateClient, TollgateClient, TollgateClient];
    const id = threadId("gate");
    f.model.push(refundTurn("g1"));
    const intr = terminal(await a.run(id, "refund A-1002").collect(), "interrupt");
    f.model.push({ text: "refunded" });
    const before = f.model.requests.length;
    const body = { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "g1", approved: true }] };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(f.servers[i % 3]!.url, "POST", `/threads/${id}/resume`, body)),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 202).every((s) => s === 409)).toBe(true);
    // Follow the one continuation to its end from a replica that maybe did not run it.
    terminal(await c.stream(id).collect(), "done");
    expect(await rows(f.db, "SELECT call_id FROM refunds WHERE call_id = $1", "g1")).toHaveLength(1);
    expect(f.model.requests.length - before).toBe(1);
    expect((await b.audit(id)).entries).toMatchObject([{ call_id: "g1", decision: "approved", executed: { status: "ok" } }]);

    // 20 messages on one idle thread, with the model holding the first run open: one runs.
    const busy = threadId("busy");
    f.model.push({ hang: true, text: "thinking" });
    const runs = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${f.servers[i % 3]!.url}/threads/${busy}/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ message: `hello ${i}`, on_disconnect: "continue" }),
        });
        if (res.status !== 200) return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
        await res.body?.cancel(); // the run goes on: on_disconnect continue
        return { status: 200, code: "" };
      }),
    );
    expect(runs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(runs.filter((r) => r.status === 409).every((r) => r.code === "thread_busy")).toBe(true);
    expect(runs.filter((r) => r.status === 409)).toHaveLength(19);
    expect((await c.cancel(busy)).cancelled).toBe(true);
    for (const s of f.servers) expectNoStackTraces(s);
  });

  it("a cancel sent to another replica stops the run: its stream ends cancelled and its model request is aborted", async () => {
    const f = await fleet();
    const [a, b, c] = f.clients as [TollgateClient, TollgateClient, TollgateClient];
    const id = threadId("remote-cancel");
    f.model.push({ hang: true, text: "partial" });
    const stream = a.run(id, "hello");
    const events = stream[Symbol.asyncIterator]();
    expect((await events.next()).value).toMatchObject({ type: "token", text: "partial" });
    const request = f.model.requests.at(-1)!;
    const sentAt = Date.now();
    const res = await b.cancel(id);
    expect(res).toEqual({ thread_id: id, cancelled: true, status: "idle" });
    const rest: ProtocolEvent[] = [];
    for (let e = await events.next(); !e.done; e = await events.next()) rest.push(e.value);
    expect(rest.map((e) => e.type)).toEqual(["cancelled"]);
    expect(rest[0]).toMatchObject({ reason: "api" });
    const abortedAt = await request.closed;
    console.log(`[replicas] cross-replica cancel: model request aborted ${abortedAt - sentAt} ms after the cancel was sent`);
    expect(await c.getThread(id)).toMatchObject({ status: "idle", last_outcome: "cancelled", messages: [{ role: "user" }] });
  });

  it("GET …/stream with Last-Event-ID on another replica follows a live run from where it left off, no gap, no repeat", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const f = await fleet({}, { delayMs: 25 });
    const [a, b, c] = f.clients as [TollgateClient, TollgateClient, TollgateClient];
    const id = threadId("follow");
    f.model.push({ text: words });
    // `continue`: the first client goes away mid-run, as a page closed and opened elsewhere.
    const live = a.run(id, "talk", { on_disconnect: "continue" });
    const seen: ProtocolEvent[] = [];
    for await (const e of live) {
      seen.push(e);
      if (seen.length === 5) break;
    }
    const lastEventId = live.lastEventId;
    expect(lastEventId).toMatch(/^[0-9a-f-]+:4$/);
    const followed: ProtocolEvent[] = [];
    let stillRunning: string | undefined;
    for await (const e of b.stream(id, { lastEventId })) {
      followed.push(e);
      // Live, not a replay of a finished run: the thread still runs as the first events arrive.
      if (followed.length === 1) stillRunning = (await c.getThread(id)).status;
    }
    expect(stillRunning).toBe("running");
    const whole = await c.stream(id).collect();
    expect([...seen, ...followed]).toEqual(whole);
    expect(terminal(whole, "done").message).toBe(words);
    expect(only(whole, "token").map((t) => t.text).join("")).toBe(words);
  });

  it("expiry closes each interrupt exactly once with every replica sweeping", async () => {
    const f = await fleet({ APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "20" });
    const ids = Array.from({ length: 6 }, (_, i) => threadId(`expire-${i}`));
    for (const [i, id] of ids.entries()) {
      f.model.push(refundTurn(`e${i}`));
      terminal(await f.clients[i % 3]!.run(id, "refund").collect(), "interrupt");
    }
    const modelCalls = f.model.requests.length;
    await until(async () => {
      const views = await Promise.all(ids.map((id, i) => f.clients[(i + 1) % 3]!.getThread(id)));
      return views.every((v) => v.status === "idle");
    });
    for (const [i, id] of ids.entries()) {
      const view = await f.clients[(i + 2) % 3]!.getThread(id);
      expect(view).toMatchObject({ status: "idle", last_outcome: "expired" });
      const tools = view.messages.filter((m) => m.role === "tool");
      expect(tools).toEqual([expect.objectContaining({ tool_call_id: `e${i}`, content: "Expired: approval window closed; not executed", status: "expired" })]);
      expect((await f.clients[i % 3]!.audit(id)).entries.map((e) => [e.call_id, e.decision])).toEqual([[`e${i}`, "expired"]]);
    }
    expect(await rows(f.db, "SELECT * FROM refunds")).toEqual([]);
    expect(f.model.requests.length).toBe(modelCalls); // no model call for an expiry
  });

  it("kill -9 of the replica running an approved call: a survivor closes it as error within twice the lease; outcome unknown, never re-run; the thread takes the next message", async () => {
    const leaseSeconds = 2;
    const f = await fleet({ REPLICA_LEASE_SECONDS: String(leaseSeconds) });
    const [a, b, c] = f.clients as [TollgateClient, TollgateClient, TollgateClient];
    const id = threadId("takeover");
    f.model.push(refundTurn("k1", "slow_refund", { order_id: "A-1003", amount_cents: 9, delay_ms: 60_000 }));
    const intr = terminal(await b.run(id, "slow refund").collect(), "interrupt");
    const resumed = a.resume(id, intr.interrupt_id, { decisions: [{ call_id: "k1", approved: true }] });
    await until(async () => (await rows(f.db, "SELECT 1 FROM ledger WHERE call_id = $1 AND status = 'executing'", "k1")).length === 1);
    const killedAt = Date.now();
    await f.servers[0]!.kill("SIGKILL");
    resumed.stop();
    await until(async () => (await b.getThread(id)).status === "idle");
    const closedAfterMs = Date.now() - killedAt;
    console.log(`[replicas] a dead replica's run closed ${closedAfterMs} ms after kill -9 (lease ${leaseSeconds} s)`);
    expect(closedAfterMs).toBeLessThan(2 * leaseSeconds * 1000);

    const view = await c.getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "error", pending: null });
    expect(view.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "k1", content: "Error: outcome unknown", status: "error" });
    // The dead run's log ends once, whichever survivor closed it.
    const replay = await b.stream(id).collect();
    expectOneTerminal(replay);
    expect(only(replay, "tool_result")).toMatchObject([{ call_id: "k1", status: "error", error: "outcome unknown" }]);

    f.model.push({ text: "I could not confirm the refund." });
    terminal(await c.run(id, "did it work?").collect(), "done");
    expect(toolMessagesSeen(f.model.requests.at(-1)!.body).get("k1")).toBe("Error: outcome unknown");
    expect(await rows(f.db, "SELECT * FROM refunds WHERE call_id = $1", "k1")).toEqual([]);
    expect(await rows(f.db, "SELECT status FROM ledger WHERE call_id = $1", "k1")).toEqual([{ status: "executing" }]);
    for (const s of f.servers.slice(1)) expectNoStackTraces(s);
  });
  it("kill -9 of a replica right after a run's first token: the survivor closes it as error, the user's message kept", async () => {
    const f = await fleet({ REPLICA_LEASE_SECONDS: "1" }, {}, 2);
    const [a, b] = f.clients as [TollgateClient, TollgateClient];
    const id = threadId("early-kill");
    f.model.push({ hang: true, text: "partial" });
    const stream = a.run(id, "hello there");
    const events = stream[Symbol.asyncIterator]();
    expect((await events.next()).value).toMatchObject({ type: "token", text: "partial" });
    await f.servers[0]!.kill("SIGKILL");
    stream.stop();
    await until(async () => (await b.getThread(id)).status === "idle");
    const view = await b.getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "error" });
    expect(view.messages).toEqual([expect.objectContaining({ role: "user", content: "hello there" })]);
    f.model.push({ text: "hi again" });
    terminal(await b.run(id, "still there?").collect(), "done");
  });

  it("the database unreachable: 503 storage_unavailable and /healthz 503, nothing lost; all answers again once it is back", async () => {
    const f = await fleet({}, {}, 2);
    const [a, b] = f.clients as [TollgateClient, TollgateClient];
    const id = threadId("outage");
    f.model.push(refundTurn("o1"));
    const intr = terminal(await a.run(id, "refund").collect(), "interrupt");
    await cluster.down();
    try {
      for (const s of f.servers) {
        const health = await call(s.url, "GET", "/healthz");
        expect([health.status, health.json]).toEqual([503, { ok: false, checks: { database: "unavailable" } }]);
        const run = await call(s.url, "POST", `/threads/${threadId("outage-new")}/runs`, { message: "hello" });
        expect([run.status, run.json.error.code]).toEqual([503, "storage_unavailable"]);
        const resume = await call(s.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "o1", approved: true }] });
        expect([resume.status, resume.json.error.code]).toEqual([503, "storage_unavailable"]);
      }
    } finally {
      await cluster.up();
    }
    await until(async () => (await Promise.all(f.servers.map((s) => call(s.url, "GET", "/healthz")))).every((r) => r.status === 200));
    // The approval that was refused is still open, and is taken now, once.
    expect(await b.getThread(id)).toMatchObject({ status: "waiting_human", pending: { interrupt_id: intr.interrupt_id } });
    f.model.push({ text: "refunded" });
    terminal(await b.resume(id, intr.interrupt_id, { decisions: [{ call_id: "o1", approved: true }] }).collect(), "done");
    expect(await rows(f.db, "SELECT call_id FROM refunds WHERE call_id = $1", "o1")).toHaveLength(1);
    f.model.push({ text: "hello again" });
    terminal(await a.run(threadId("outage-after"), "hello").collect(), "done");
    for (const s of f.servers) expectNoStackTraces(s);
  });
  it("a thread its live replica no longer runs (the database lost the run's committed end) is closed by that replica's sweep", async () => {
    const f = await fleet({ REPLICA_LEASE_SECONDS: "1" }, {}, 2);
    const [a, b] = f.clients as [TollgateClient, TollgateClient];
    const id = threadId("ghost");
    f.model.push({ text: "hello" });
    terminal(await a.run(id, "hi").collect(), "done");
    // As after a database crash that lost the last commits: the thread back in 'running' under a
    // replica that is alive and renewing its lease, held by a run that ended long ago.
    const [{ replica_id }] = await rows<{ replica_id: string }>(f.db, "SELECT replica_id FROM replicas LIMIT 1");
    const [{ latest_run_id }] = await rows<{ latest_run_id: string }>(f.db, "SELECT latest_run_id FROM threads WHERE thread_id = $1", id);
    await f.db.query("UPDATE threads SET status = 'running', holder_id = $1, replica_id = $2 WHERE thread_id = $3", [latest_run_id, replica_id, id]);
    await until(async () => (await b.getThread(id)).status === "idle");
    expect(await b.getThread(id)).toMatchObject({ status: "idle", last_outcome: "error" });
    f.model.push({ text: "again" });
    expect(terminal(await b.run(id, "still there?").collect(), "done").message).toBe("again");
  });
});
