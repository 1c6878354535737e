import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { call, expectNoStackTraces, only, terminal, threadId, toolMessagesSeen } from "./support.js";

let model: FakeOpenAI;
const env = () => ({ MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url, TOLLGATE_TEST_TOOLS: "1" });
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(async () => model?.close());

/** Runs `fn` against a server, killing it afterwards whatever happens. */
async function withServer<T>(extra: Record<string, string>, dataDir: string | undefined, fn: (s: ServerProcess, c: TollgateClient) => Promise<T>) {
  const server = await startServer({ ...env(), ...extra }, dataDir ? { dataDir } : {});
  try {
    return await fn(server, new TollgateClient({ baseUrl: server.url, reconnect: { retries: 0 } }));
  } finally {
    await server.kill("SIGKILL");
  }
}

const refundTurn = (id: string, tool = "refund_order", args: object = { order_id: "A-1002", amount_cents: 200, reason: "r" }) => ({
  toolCalls: [{ id, name: tool, args }],
});

/** Resolves once `cond` holds; for state another process writes, where there is no event to await. */
async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("restarts", () => {
  it("an open interrupt survives kill -9; approving after restart refunds once and completes", async () => {
    const id = threadId("kill-waiting");
    model.push(refundTurn("k1"));
    const first = await startServer(env());
    const c1 = new TollgateClient({ baseUrl: first.url });
    const intr = terminal(await c1.run(id, "refund").collect(), "interrupt");
    await first.kill("SIGKILL");

    await withServer({}, first.dataDir, async (server, c2) => {
      const view = await c2.getThread(id);
      expect(view).toMatchObject({ status: "waiting_human", pending: { interrupt_id: intr.interrupt_id, expires_at: intr.expires_at } });
      model.push({ text: "refunded after restart" });
      const resumed = await c2.resume(id, intr.interrupt_id, { decisions: [{ call_id: "k1", approved: true }] }).collect();
      expect(terminal(resumed, "done").message).toBe("refunded after restart");
      const db = openDb(server.dataDir);
      expect(db.rows("refunds", "call_id = ?", "k1")).toHaveLength(1);
      db.close();
      // The decision made after the restart is on the trail with how the call ran.
      expect((await c2.audit(id)).entries).toMatchObject([{ call_id: "k1", decision: "approved", by: "anonymous", executed: { status: "ok" } }]);
      expectNoStackTraces(server);
    });
  });

  it("kill -9 while an approved tool executes: not re-run, reported as outcome unknown, thread usable", async () => {
    const id = threadId("kill-executing");
    model.push(refundTurn("k2", "slow_refund", { order_id: "A-1003", amount_cents: 9, delay_ms: 60_000 }));
    const first = await startServer(env());
    const c1 = new TollgateClient({ baseUrl: first.url, reconnect: { retries: 0 } });
    const intr = terminal(await c1.run(id, "slow refund").collect(), "interrupt");
    const resumed = c1.resume(id, intr.interrupt_id, { decisions: [{ call_id: "k2", approved: true }] });
    const db1 = openDb(first.dataDir);
    await until(() => db1.rows("ledger", "call_id = ? AND status = 'executing'", "k2").length === 1);
    db1.close();
    await first.kill("SIGKILL");
    resumed.stop();

    await withServer({}, first.dataDir, async (server, c2) => {
      const view = await c2.getThread(id);
      expect(view).toMatchObject({ status: "idle", last_outcome: "error", pending: null });
      expect(view.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "k2", content: "Error: outcome unknown", status: "error" });
      // The dead run's stream now ends: the call's fate, then the error.
      const replay = await c2.stream(id).collect();
      expect(only(replay, "tool_result")).toMatchObject([{ call_id: "k2", status: "error", error: "outcome unknown" }]);
      expect(terminal(replay, "error").code).toBe("internal_error");

      model.push({ text: "I could not confirm the refund." });
      const next = await c2.run(id, "did it work?").collect();
      terminal(next, "done");
      expect(toolMessagesSeen(model.requests.at(-1)!.body).get("k2")).toBe("Error: outcome unknown");
      const db = openDb(server.dataDir);
      expect(db.rows("refunds", "call_id = ?", "k2")).toHaveLength(0);
      expect(db.rows("ledger", "call_id = ?", "k2")).toMatchObject([{ status: "executing" }]);
      db.close();
      // The approval survived the kill; the call it let through has no known outcome.
      expect((await c2.audit(id)).entries).toMatchObject([{ call_id: "k2", decision: "approved", by: "anonymous", executed: { status: "unknown" } }]);
    });
  });

  it("a run in flight at kill -9 is closed as error at its last checkpoint", async () => {
    const id = threadId("kill-running");
    model.push({ hang: true, text: "partial" });
    const first = await startServer(env());
    const c1 = new TollgateClient({ baseUrl: first.url, reconnect: { retries: 0 } });
    const stream = c1.run(id, "hello");
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: "token", text: "partial" });
    await first.kill("SIGKILL");
    stream.stop();
    await withServer({}, first.dataDir, async (_server, c2) => {
      const view = await c2.getThread(id);
      expect(view).toMatchObject({ status: "idle", last_outcome: "error" });
      expect(view.messages.map((m) => m.role)).toEqual(["user"]);
      expect(terminal(await c2.stream(id).collect(), "error").code).toBe("internal_error");
      model.push({ text: "hi again" });
      expect(terminal(await c2.run(id, "hello?").collect(), "done").message).toBe("hi again");
    });
  });

  it("a fork in flight at kill -9 keeps its message after the checkpoint it forked from, not after the old head", async () => {
    const id = threadId("kill-fork");
    const first = await startServer(env());
    const c1 = new TollgateClient({ baseUrl: first.url, reconnect: { retries: 0 } });
    const lg = new Client({ apiUrl: `${first.url}/langgraph`, callerOptions: { maxRetries: 0 } });
    model.push({ text: "First answer." });
    terminal(await c1.run(id, "one").collect(), "done");
    const from = (await lg.threads.getState(id)).checkpoint;
    model.push({ text: "Second answer." });
    terminal(await c1.run(id, "two").collect(), "done");
    model.push({ hang: true, text: "partial" });
    const fork = lg.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "two, again" }] }, checkpoint: from, streamMode: "messages-tuple" })[Symbol.asyncIterator]();
    // The model has begun to answer: the fork is in flight, nothing of it saved.
    for (let n = await fork.next(); (n.value as { event?: string } | undefined)?.event !== "messages"; n = await fork.next()) {
      if (n.done) throw new Error("the fork ended before the model answered");
    }
    await first.kill("SIGKILL");
    await withServer({}, first.dataDir, async (_server, c2) => {
      const view = await c2.getThread(id);
      expect(view).toMatchObject({ status: "idle", last_outcome: "error" });
      expect(view.messages.map((m) => m.content)).toEqual(["one", "First answer.", "two, again"]);
    });
  });
});

describe("expiry", () => {
  it("a resume after the deadline is 410 even before the closer ran; closed at the next start", async () => {
    const id = threadId("late");
    model.push(refundTurn("e1"));
    // The periodic sweep is off (huge interval): only the deadline check can refuse the resume.
    const dataDir = await withServer({ APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "600000" }, undefined, async (server, c) => {
      const intr = terminal(await c.run(id, "refund").collect(), "interrupt");
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(intr.expires_at) - Date.now() + 20)));
      const r = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "e1", approved: true }] });
      expect([r.status, r.json.error.code]).toEqual([410, "approval_expired"]);
      expect((await c.getThread(id)).status).toBe("waiting_human");
      return server.dataDir;
    });
    // Expired while the server was down: the start-up sweep closes it.
    await withServer({}, dataDir, async (server, c) => {
      await until(async () => (await c.getThread(id)).status === "idle");
      const view = await c.getThread(id);
      expect(view).toMatchObject({ last_outcome: "expired", pending: null });
      expect(view.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "e1", content: "Expired: approval window closed; not executed", status: "expired" });
      const db = openDb(server.dataDir);
      expect(db.rows("refunds", "call_id = ?", "e1")).toHaveLength(0);
      expect(db.rows("interrupts", "thread_id = ?", id)).toMatchObject([{ status: "expired" }]);
      db.close();
      // The 410 decided nothing; the expiry is the system's entry.
      const entries = (await c.audit(id)).entries;
      expect(entries).toMatchObject([{ call_id: "e1", decision: "expired", by: null, reason: "approval window closed" }]);
      expect(entries[0]!.executed).toBeUndefined();
    });
  });

  it("the closer expires a waiting interrupt by itself: read-only results kept, no model call", async () => {
    const id = threadId("closer");
    model.push({
      toolCalls: [
        { id: "x1", name: "lookup_order", args: { order_id: "A-1004" } },
        { id: "x2", name: "refund_order", args: { order_id: "A-1004", amount_cents: 1, reason: "r" } },
      ],
    });
    await withServer({ APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "100" }, undefined, async (server, c) => {
      const intr = terminal(await c.run(id, "check and refund").collect(), "interrupt");
      const requestsBefore = model.requests.length;
      await until(async () => (await c.getThread(id)).status === "idle");
      const view = await c.getThread(id);
      expect(view.last_outcome).toBe("expired");
      const tools = view.messages.filter((m) => m.role === "tool");
      expect(tools.map((m) => m.tool_call_id)).toEqual(["x1", "x2"]);
      expect(JSON.parse(tools[0]!.content)).toMatchObject({ order_id: "A-1004" });
      expect(tools[1]!.content).toBe("Expired: approval window closed; not executed");
      expect(model.requests.length).toBe(requestsBefore);
      const r = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "x2", approved: true }] });
      expect([r.status, r.json.error.code]).toEqual([410, "approval_expired"]);
      const db = openDb(server.dataDir);
      expect(db.rows("refunds", "call_id = ?", "x2")).toHaveLength(0);
      db.close();
    });
  });

  it("an approval for a cancelled interrupt is stale once a new one is open, and runs nothing", async () => {
    const id = threadId("stale");
    await withServer({}, undefined, async (server, c) => {
      model.push(refundTurn("a1"));
      const a = terminal(await c.run(id, "refund").collect(), "interrupt");
      await c.cancel(id);
      model.push(refundTurn("b1"));
      const b = terminal(await c.run(id, "refund again").collect(), "interrupt");
      const r = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: a.interrupt_id, decisions: [{ call_id: "a1", approved: true }] });
      expect([r.status, r.json.error.code]).toEqual([409, "stale_interrupt"]);
      expect((await c.getThread(id)).pending?.interrupt_id).toBe(b.interrupt_id);
      const db = openDb(server.dataDir);
      expect(db.rows("refunds", "call_id IN ('a1', 'b1')")).toHaveLength(0);
      db.close();
    });
  });
});
