import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { type RecordedRequest, startFakeOpenAI } from "../helpers/fake-openai.js";
import { startServer } from "../helpers/server-process.js";
import { within } from "../helpers/within.js";
import { call, expectNoStackTraces, only, type Stack, startStack, terminal, threadId } from "./support.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack({}, { delayMs: 20 });
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

const LONG = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");

// Deadlines for waits that hang when what they wait for is broken, well inside the 30 s test
// timeout, so the failure says what did not happen. An abort is a socket close: it is at once.
const ABORT_MS = 5_000;
const END_MS = 10_000;

/** The model server saw the request's connection closed before the answer was over. */
const aborted = (req: RecordedRequest, since: string) =>
  within(req.closed, { ms: ABORT_MS, failure: "the model's HTTP request was not aborted", since });

/** Starts a run on a slowly streaming model and returns once its first token arrived. */
async function startSlowRun(id: string, onDisconnect?: "cancel" | "continue") {
  s.model.push({ text: LONG });
  const stream = s.client.run(id, "tell me a long story", onDisconnect ? { on_disconnect: onDisconnect } : {});
  const it = stream[Symbol.asyncIterator]();
  const first = await it.next();
  expect(first.value).toMatchObject({ type: "token" });
  const req = s.model.requests.at(-1)!;
  return { stream, it, req };
}

async function rest(it: AsyncIterator<any>) {
  const out = [];
  for (let r = await it.next(); !r.done; r = await it.next()) out.push(r.value);
  return out;
}

describe("cancel", () => {
  it("stops a streaming run: the model request is aborted, the stream ends cancelled, no partial text is kept", async () => {
    const id = threadId("cancel-api");
    const { it: events, req } = await startSlowRun(id);
    const res = await s.client.cancel(id);
    expect(res).toEqual({ thread_id: id, cancelled: true, status: "idle" });
    await aborted(req, "the cancel");
    const tail = await within(rest(events), { ms: END_MS, failure: "the run's stream did not end", since: "the cancel" });
    expect(terminal(tail, "cancelled").reason).toBe("api");
    const view = await s.client.getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled" });
    expect(view.messages.map((m) => m.role)).toEqual(["user"]);

    s.model.push({ text: "Fresh start." });
    expect(terminal(await s.client.run(id, "short one please").collect(), "done").message).toBe("Fresh start.");
    // The model saw both user messages and no partial assistant text.
    const roles = s.model.requests.at(-1)!.body.messages.map((m: { role: string }) => m.role);
    expect(roles.filter((r: string) => r === "assistant")).toEqual([]);
  });

  it("a client that goes away cancels the run by default (reason client)", async () => {
    const id = threadId("cancel-client");
    const { stream, req } = await startSlowRun(id);
    stream.stop();
    await aborted(req, "the client going away");
    const replay = await s.client.stream(id).collect();
    expect(terminal(replay, "cancelled").reason).toBe("client");
    expect(await s.client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "cancelled" });
  });

  it("with on_disconnect: continue, a client that goes away does not stop the run", async () => {
    const id = threadId("continue");
    const { stream, req } = await startSlowRun(id, "continue");
    stream.stop();
    await req.finished;
    const replay = await s.client.stream(id).collect();
    expect(terminal(replay, "done").message).toBe(LONG);
    expect(await s.client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "completed" });
  });

  it("cancelling during a slow approved tool commits nothing", async () => {
    const id = threadId("cancel-tool");
    s.model.push({ toolCalls: [{ id: "slow1", name: "slow_refund", args: { order_id: "A-1001", amount_cents: 7, delay_ms: 5000 } }] });
    const intr = terminal(await s.client.run(id, "slow refund").collect(), "interrupt");
    const resumed = s.client.resume(id, intr.interrupt_id, { decisions: [{ call_id: "slow1", approved: true }] });
    const it = resumed[Symbol.asyncIterator]();
    // The ledger row appears when the tool starts; cancel only then.
    await waitFor("the ledger row of the approved call slow1", () => s.db.rows("ledger", "call_id = ?", "slow1").length === 1);
    expect((await s.client.cancel(id)).cancelled).toBe(true);
    const events = await within(rest(it), { ms: END_MS, failure: "the run's stream did not end", since: "the cancel" });
    expect(terminal(events, "cancelled").reason).toBe("api");
    expect(only(events, "tool_result")).toMatchObject([{ call_id: "slow1", status: "cancelled" }]);
    expect(s.db.rows("refunds", "call_id = ?", "slow1")).toHaveLength(0);
    const view = await s.client.getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled" });
    expect(view.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "slow1", content: "Cancelled: not executed", status: "cancelled" });
  });

  it("cancelling a thread that waits for approval closes the interrupt; cancel is idempotent", async () => {
    const id = threadId("cancel-waiting");
    s.model.push({ toolCalls: [{ id: "w1", name: "refund_order", args: { order_id: "A-1001", amount_cents: 1, reason: "r" } }] });
    const intr = terminal(await s.client.run(id, "refund").collect(), "interrupt");
    expect(await s.client.cancel(id)).toEqual({ thread_id: id, cancelled: true, status: "idle" });
    expect(await s.client.cancel(id)).toEqual({ thread_id: id, cancelled: false, status: "idle" });
    const view = await s.client.getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled", pending: null });
    expect(view.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "w1", content: "Cancelled: not executed", status: "cancelled" });
    const r = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "w1", approved: true }] });
    expect([r.status, r.json.error.code]).toEqual([409, "not_waiting"]);
    expect(s.db.rows("refunds", "call_id = ?", "w1")).toHaveLength(0);
    // and the thread takes a new message; the model sees the cancelled call answered
    s.model.push({ text: "ok" });
    terminal(await s.client.run(id, "never mind").collect(), "done");
    const seen = s.model.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === "tool");
    expect(seen).toMatchObject({ tool_call_id: "w1" });
  });

  it("cancel of an unknown thread is thread_not_found", async () => {
    const r = await call(s.server.url, "POST", `/threads/${threadId("nobody")}/cancel`);
    expect([r.status, r.json.error.code]).toEqual([404, "thread_not_found"]);
  });
});

describe("single flight", () => {
  it("20 concurrent resumes of one interrupt: one runs, the rest are refused, one refund", async () => {
    const id = threadId("race-resume");
    s.model.push({ toolCalls: [{ id: "race1", name: "refund_order", args: { order_id: "A-1003", amount_cents: 3, reason: "r" } }] });
    const intr = terminal(await s.client.run(id, "refund").collect(), "interrupt");
    s.model.push({ text: "done" });
    const body = { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "race1", approved: true }] };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call(s.server.url, "POST", `/threads/${id}/resume`, body, { accept: "text/event-stream" })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.contentType).toContain("text/event-stream");
    for (const r of results.filter((r) => r.status !== 200)) {
      expect([r.status, ["thread_busy", "not_waiting"].includes(r.json.error.code)]).toEqual([409, true]);
    }
    expect(s.db.rows("refunds", "call_id = ?", "race1")).toHaveLength(1);
  });

  it("20 concurrent runs on one thread: exactly one streams", async () => {
    const id = threadId("race-run");
    s.model.push({ text: "only once" });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call(s.server.url, "POST", `/threads/${id}/runs`, { message: "go" })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.json.error.code === "thread_busy")).toHaveLength(19);
    const user = (await s.client.getThread(id)).messages.filter((m) => m.role === "user");
    expect(user).toHaveLength(1);
  });
});

describe("shutdown", () => {
  it("SIGTERM cancels runs in flight (reason shutdown), exits 0, and the thread is usable after restart", async () => {
    const model = await startFakeOpenAI({ delayMs: 20 });
    const env = { MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url };
    const first = await startServer(env);
    const client = new TollgateClient({ baseUrl: first.url, reconnect: { retries: 0 } });
    const id = threadId("sigterm");
    model.push({ text: LONG });
    const stream = client.run(id, "long");
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: "token" });
    const exit = first.kill("SIGTERM");
    const events = await rest(it).catch(() => []);
    expect(terminal(events, "cancelled").reason).toBe("shutdown");
    expect(await exit).toBe(0);

    const second = await startServer(env, { dataDir: first.dataDir });
    try {
      const c2 = new TollgateClient({ baseUrl: second.url });
      expect(await c2.getThread(id)).toMatchObject({ status: "idle", last_outcome: "cancelled" });
      model.push({ text: "still here" });
      expect(terminal(await c2.run(id, "hello again").collect(), "done").message).toBe("still here");
    } finally {
      await second.kill();
      await model.close();
    }
  });
});

/** Waits for `what` to show, a condition the test cannot await as an event (a row written by another process). */
async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what} did not show within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
