/**
 * LangGraph's thread-centric protocol at /langgraph, as the SDK's `ThreadStream` and raw clients
 * speak it: one event stream that stays open across runs and sees the whole approval; replay by
 * `seq` from the durable log, the same after a restart; a quorum decided by two people through
 * `input.respond`; expiry told on the input and tools channels; commands that could change state
 * around the gate refused. The gate's shared guarantees (once, never, four eyes, races, cancel,
 * masking, expiry, rate limits) run through ThreadStream in api-faces.test.ts.
 */
import { Client } from "@langchain/langgraph-sdk";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb, type TestDb } from "../helpers/sqlite.js";
import { within } from "../helpers/within.js";
import { TollgateClient } from "../../src/client/index.js";
import { call, expectNoStackTraces, type Stack, startStack, threadId, whenIdle } from "./support.js";

const FINANCE = [1, 2].map((i) => [`tok-fin-00000${i}`, { sub: `fin${i}`, roles: ["finance"] }] as const);
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-bob-000001": { sub: "bob", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
  ...Object.fromEntries(FINANCE),
};
const ENV = { AUTH_TOKENS: JSON.stringify(TOKENS), AUTH_ROLES: "finance" };
const REFUND = { order_id: "A-1001", amount_cents: 500, reason: "late" };
/** Above $500: two of finance. */
const LARGE = { order_id: "A-1003", amount_cents: 60_000, reason: "damaged" };

let s: Stack;
/** Approvals expire after a second here. */
let short: ServerProcess;
let shortDb: TestDb;
beforeAll(async () => {
  s = await startStack(ENV);
  short = await startServer({ MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url, TOLLGATE_TEST_TOOLS: "1", ...ENV, APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
  shortDb = openDb(short.dataDir);
});
afterAll(async () => {
  for (const server of [s?.server, short].filter(Boolean)) expectNoStackTraces(server!);
  shortDb?.close();
  await short?.kill();
  await s?.stop();
});

const client = (token: string, url = s.server.url) => new Client({ apiUrl: `${url}/langgraph`, apiKey: token, callerOptions: { maxRetries: 0 } });
const refunds = (db: TestDb, callId: string) => db.rows("refunds", "call_id = ?", callId);

type Event = { type: "event"; event_id: string; seq: number; method: string; params: { namespace: string[]; data: any } };

/**
 * A raw SSE stream of the thread's events, read until `until` holds for what came (or the deadline
 * passes, naming `failure`). Every frame's `id` is its event's `event_id`, its `event` the method.
 */
async function readStream(o: { url?: string; token: string; id: string; body: object; until: (events: Event[]) => boolean; failure: string }): Promise<Event[]> {
  const ac = new AbortController();
  const res = await fetch(`${o.url ?? s.server.url}/langgraph/threads/${o.id}/stream/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${o.token}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(o.body),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const events: Event[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    await within(
      (async () => {
        while (!o.until(events)) {
          const { value, done } = await reader.read();
          if (done) throw new Error("the stream closed");
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = /^data: (.+)$/m.exec(block)?.[1];
            if (!data) continue;
            const e = JSON.parse(data) as Event;
            expect(/^id: (.+)$/m.exec(block)?.[1]).toBe(e.event_id);
            expect(/^event: (.+)$/m.exec(block)?.[1]).toBe(e.method);
            events.push(e);
          }
        }
      })(),
      { ms: 15_000, failure: o.failure },
    );
  } finally {
    ac.abort();
  }
  return events;
}

const lifecycle = (events: Event[]) => events.filter((e) => e.method === "lifecycle").map((e) => e.params.data.event);
const ended = (n: number) => (events: Event[]) => lifecycle(events).filter((l) => l === "completed" || l === "interrupted" || l === "failed").length >= n;
const ALL = ["lifecycle", "messages", "tools", "input", "values", "updates"];

/** alice's refund, stopped at the gate, through ThreadStream; the interrupt id the input channel names. */
async function refundAsked(id: string, callId: string, args: object = REFUND, url = s.server.url): Promise<string> {
  s.model.push({ toolCalls: [{ id: callId, name: "refund_order", args }] });
  const thread = client("tok-alice-0001", url).threads.stream(id, { assistantId: "agent" });
  try {
    await thread.run.start({ input: { messages: [{ type: "human", content: "refund my order" }] } });
    const sub = await thread.subscribe({ channels: ["lifecycle", "input"], since: thread.ordering.lastAppliedThroughSeq });
    let interruptId: string | undefined;
    await within(
      (async () => {
        for await (const e of sub as AsyncIterable<Event>) {
          if (e.method === "input.requested") interruptId = e.params.data.interrupt_id;
          if (e.method === "lifecycle" && e.params.data.event === "interrupted") return;
        }
      })(),
      { ms: 15_000, failure: "the refund did not stop at the gate" },
    );
    return interruptId!;
  } finally {
    await thread.close();
  }
}

/** `input.respond` as `who`, through ThreadStream; what the command answered. */
async function respond(who: string, id: string, interruptId: string, response: unknown, url = s.server.url) {
  const thread = client(who, url).threads.stream(id, { assistantId: "agent" });
  try {
    return (await thread.input.respond({ namespace: [], interrupt_id: interruptId, response } as never)) as unknown;
  } finally {
    await thread.close();
  }
}

describe("one stream across runs", () => {
  it("a stream opened before the thread exists sees the run, the gate, the approval and the refund's run, seqs rising", async () => {
    const id = threadId("ts-whole");
    const streamed = readStream({ token: "tok-alice-0001", id, body: { channels: ALL }, until: ended(2), failure: "one stream did not carry both runs to their ends" });
    // The SDK subscribes first and starts the run after: the stream waits for the thread.
    const interruptId = await refundAsked(id, "ts-r1");
    s.model.push({ text: "Refunded." });
    await respond("tok-ops-000001", id, interruptId, { decisions: [{ type: "approve" }] });
    const events = await streamed;

    expect(lifecycle(events)).toEqual(["running", "interrupted", "running", "completed"]);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
    const methods = events.map((e) => e.method);
    // Asked, answered, then the call ran: started and finished, once.
    expect(methods.indexOf("input.requested")).toBeLessThan(methods.indexOf("input.answered"));
    const answered = events.find((e) => e.method === "input.answered")!;
    expect(answered.params.data.interrupt_ids).toContain(interruptId);
    const refundTools = events.filter((e) => e.method === "tools" && e.params.data.tool_call_id === "ts-r1").map((e) => e.params.data.event);
    expect(refundTools).toEqual(["tool-started", "tool-finished"]);
    expect(methods.indexOf("input.answered")).toBeLessThan(events.findIndex((e) => e.params.data.event === "tool-started" && e.params.data.tool_call_id === "ts-r1"));
    // The input channel carries the HITL value in both casings with tollgate's block.
    const requested = events.find((e) => e.method === "input.requested")!.params.data;
    expect(requested).toMatchObject({ interrupt_id: interruptId, payload: { action_requests: [{ name: "refund_order" }], actionRequests: [{ name: "refund_order" }], tollgate: { interrupt_id: interruptId, calls: [{ call_id: "ts-r1" }] } } });
    expect(refunds(s.db, "ts-r1")).toHaveLength(1);
  });

  it("replays from the durable log: since gives exactly what came after, without since the latest run, filtered in order", async () => {
    const id = threadId("ts-replay");
    const interruptId = await refundAsked(id, "ts-r2");
    s.model.push({ text: "Refunded." });
    await respond("tok-ops-000001", id, interruptId, { decisions: [{ type: "approve" }] });
    const all = await readStream({ token: "tok-alice-0001", id, body: { channels: ALL, since: 0 }, until: ended(2), failure: "the whole thread was not replayed" });
    expect(lifecycle(all)).toEqual(["running", "interrupted", "running", "completed"]);
    // Without since: the latest run from its first event.
    const latest = await readStream({ token: "tok-alice-0001", id, body: { channels: ALL }, until: ended(1), failure: "the latest run was not replayed" });
    expect(latest.map((e) => e.event_id)).toEqual(all.filter((e) => e.seq >= latest[0]!.seq).map((e) => e.event_id));
    expect(lifecycle(latest)).toEqual(["running", "completed"]);
    // From the middle: everything after it, nothing before, nothing twice.
    const middle = all[Math.floor(all.length / 2)]!;
    const rest = await readStream({ token: "tok-alice-0001", id, body: { channels: ALL, since: middle.seq }, until: ended(1), failure: "the replay after since did not reach the end" });
    expect(rest.map((e) => e.event_id)).toEqual(all.filter((e) => e.seq > middle.seq).map((e) => e.event_id));
    // A channel filter keeps the order and ids of what it lets through.
    const tools = await readStream({ token: "tok-alice-0001", id, body: { channels: ["tools", "lifecycle"], since: 0 }, until: ended(2), failure: "the filtered replay did not reach the end" });
    expect(tools.map((e) => e.event_id)).toEqual(all.filter((e) => e.method === "tools" || e.method === "lifecycle").map((e) => e.event_id));
  });

  it("a reconnect mid-run with since misses nothing and repeats nothing; a cancel ends the run failed, 'cancelled'", async () => {
    const id = threadId("ts-midrun");
    s.model.push({ hang: true, text: "Looking into it" });
    const thread = client("tok-alice-0001").threads.stream(id, { assistantId: "agent" });
    await thread.run.start({ input: { messages: [{ type: "human", content: "slow one" }] } });
    await thread.close();
    const first = await readStream({
      token: "tok-alice-0001",
      id,
      body: { channels: ALL },
      until: (events) => events.some((e) => e.method === "messages" && e.params.data.event === "content-block-delta"),
      failure: "the live run's first token did not arrive",
    });
    const rest = readStream({ token: "tok-alice-0001", id, body: { channels: ALL, since: first.at(-1)!.seq }, until: ended(1), failure: "the reconnected stream did not see the run end" });
    const [latest] = await client("tok-alice-0001").runs.list(id, { limit: 1 });
    await client("tok-alice-0001").runs.cancel(id, latest!.run_id);
    const second = await rest;
    expect(second.at(-1)!.params.data).toMatchObject({ event: "failed", error: "cancelled" });
    const all = await readStream({ token: "tok-alice-0001", id, body: { channels: ALL, since: 0 }, until: ended(1), failure: "the thread was not replayed" });
    expect([...first, ...second].map((e) => e.event_id)).toEqual(all.map((e) => e.event_id));
  });

  it("a since older than the kept log is reported as a gap (an error frame naming the seqs), then the kept runs follow", async () => {
    const env = { MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url, TOLLGATE_TEST_TOOLS: "1", ...ENV, EVENT_RETENTION_RUNS: "1" };
    const kept = await startServer(env);
    try {
      const id = threadId("ts-gap");
      for (const text of ["first", "second"]) {
        s.model.push({ text: `answer to ${text}` });
        const thread = client("tok-alice-0001", kept.url).threads.stream(id, { assistantId: "agent" });
        await thread.run.start({ input: { messages: [{ type: "human", content: text }] } });
        await thread.close();
        await readStream({ url: kept.url, token: "tok-alice-0001", id, body: { channels: ["lifecycle"] }, until: ended(1), failure: `the ${text} run did not end` });
      }
      const res = await fetch(`${kept.url}/langgraph/threads/${id}/stream/events`, {
        method: "POST",
        headers: { authorization: "Bearer tok-alice-0001", "content-type": "application/json" },
        body: JSON.stringify({ channels: ["lifecycle"], since: 0 }),
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      await within(
        (async () => {
          while (!text.includes('"completed"')) text += (await reader.read()).value ?? "";
        })(),
        { ms: 10_000, failure: "the kept run did not follow the gap" },
      );
      await reader.cancel();
      const [gapFrame] = text.split("\n\n");
      expect(gapFrame).toMatch(/^event: error\ndata: /);
      expect(JSON.parse(gapFrame!.split("data: ")[1]!)).toMatchObject({ type: "error", id: null, error: "no_such_run", tollgate: { code: "events_pruned", from_seq: 2 ** 32 } });
      // The second run's events come whole after it.
      expect(text).toContain('"event":"running"');
      expectNoStackTraces(kept);
    } finally {
      await kept.kill();
    }
  });

  it("after a kill -9 and a restart, the same since replays the same events under the same ids", async () => {
    const env = { MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url, TOLLGATE_TEST_TOOLS: "1", ...ENV };
    const first = await startServer(env);
    const id = threadId("ts-restart");
    const interruptId = await refundAsked(id, "ts-k1", REFUND, first.url);
    s.model.push({ text: "Refunded." });
    await respond("tok-ops-000001", id, interruptId, { decisions: [{ type: "approve" }] }, first.url);
    const read = (url: string) => readStream({ url, token: "tok-alice-0001", id, body: { channels: ALL, since: 0 }, until: ended(2), failure: "the thread was not replayed" });
    const before = await read(first.url);
    await first.kill("SIGKILL");
    const second = await startServer(env, { dataDir: first.dataDir });
    try {
      const after = await read(second.url);
      const shape = (events: Event[]) => events.map((e) => [e.event_id, e.method, e.method === "values" ? null : e.params.data]);
      expect(shape(after)).toEqual(shape(before));
      expectNoStackTraces(second);
    } finally {
      await second.kill();
    }
  });

  it("someone else's thread: its stream is accepted and silent as a free id's, its reads the same 404", async () => {
    const id = threadId("ts-owner");
    await refundAsked(id, "ts-r3");
    const bob = { authorization: "Bearer tok-bob-000001", "content-type": "application/json" };
    const open = (thread: string, signal: AbortSignal) => fetch(`${s.server.url}/langgraph/threads/${thread}/stream/events`, { method: "POST", headers: bob, body: JSON.stringify({ channels: ALL, since: 0 }), signal });
    const ac = new AbortController();
    const [hers, free] = await Promise.all([open(id, ac.signal), open(`${id}-none`, ac.signal)]);
    expect([hers.status, free.status]).toEqual([200, 200]);
    let heard = "";
    const read = (async () => {
      const reader = hers.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) heard += r.value;
    })().catch(() => undefined);
    // alice's own replay of the thread: bob's stream has had as long to show anything.
    await readStream({ token: "tok-alice-0001", id, body: { channels: ALL, since: 0 }, until: ended(1), failure: "alice's thread was not replayed" });
    ac.abort();
    await read;
    expect(heard.replaceAll(": ping\n\n", "")).toBe("");
    const missing = await call(s.server.url, "POST", `/langgraph/threads/${id}-none/commands`, { id: 1, method: "state.get", params: {} }, { authorization: "Bearer tok-bob-000001" });
    const command = await call(s.server.url, "POST", `/langgraph/threads/${id}/commands`, { id: 1, method: "state.get", params: {} }, { authorization: "Bearer tok-bob-000001" });
    expect([command.status, missing.status]).toEqual([404, 404]);
    expect((command.json as { error: { message: string } }).error.message.replace(id, "")).toBe((missing.json as { error: { message: string } }).error.message.replace(`${id}-none`, ""));
  });
});

describe("the gate through input.respond", () => {
  it("a quorum answered by two of finance: the first answers waiting_human and asks again with one approval; the second runs the refund once", async () => {
    const id = threadId("ts-quorum");
    const interruptId = await refundAsked(id, "ts-q1", LARGE);
    const first = await call(s.server.url, "POST", `/langgraph/threads/${id}/commands`, { id: 3, method: "input.respond", params: { namespace: [], interrupt_id: interruptId, response: { decisions: [{ type: "approve" }] } } }, { authorization: `Bearer ${FINANCE[0]![0]}` });
    expect(first.json).toMatchObject({ type: "success", id: 3, result: { status: "waiting_human", waiting_on: ["ts-q1"] } });
    expect(refunds(s.db, "ts-q1")).toHaveLength(0);
    const asked = await readStream({
      token: "tok-alice-0001",
      id,
      body: { channels: ["input"], since: 0 },
      until: (events) => events.filter((e) => e.method === "input.requested").length >= 2,
      failure: "the partial decision did not ask again",
    });
    const again = asked.filter((e) => e.method === "input.requested").at(-1)!.params.data;
    expect(again.payload.tollgate.calls[0]).toMatchObject({ call_id: "ts-q1", approvals: [{ by: "fin1" }] });
    s.model.push({ text: "Refunded after two approvals." });
    await respond(FINANCE[1]![0], id, interruptId, { decisions: [{ type: "approve" }] });
    const after = await readStream({ token: "tok-alice-0001", id, body: { channels: ["lifecycle", "tools"] }, until: ended(1), failure: "the approved refund's run did not end" });
    expect(after.filter((e) => e.method === "tools" && e.params.data.tool_call_id === "ts-q1").map((e) => e.params.data.event)).toEqual(["tool-started", "tool-finished"]);
    expect(refunds(s.db, "ts-q1")).toHaveLength(1);
  });

  it("expiry closes the interrupt on every stream: input.answered, then the call's tool-error with the text the model is told", async () => {
    const id = threadId("ts-expiry");
    const interruptId = await refundAsked(id, "ts-e1", REFUND, short.url);
    const events = await readStream({
      url: short.url,
      token: "tok-alice-0001",
      id,
      body: { channels: ["input", "tools"] },
      until: (es) => es.some((e) => e.method === "tools" && e.params.data.event === "tool-error"),
      failure: "the expiry was not told on the stream",
    });
    expect(events.find((e) => e.method === "input.answered")!.params.data.interrupt_ids).toContain(interruptId);
    expect(events.find((e) => e.params.data.event === "tool-error")!.params.data).toMatchObject({ tool_call_id: "ts-e1", code: "expired", message: expect.stringMatching(/^Expired: /) });
    expect(events.some((e) => e.params.data.event === "tool-started")).toBe(false);
    // The stream tells the close as it commits; the calls' answers are written just after.
    await whenIdle(new TollgateClient({ baseUrl: short.url, token: "tok-alice-0001" }), id, "the expired thread did not go idle");
    // The owner may still see the thread: time, not four eyes, refuses the approval now.
    await expect(respond("tok-alice-0001", id, interruptId, { decisions: [{ type: "approve" }] }, short.url)).rejects.toMatchObject({ response: { tollgate: { code: "approval_expired" } } });
    expect(refunds(shortDb, "ts-e1")).toHaveLength(0);
  });
});

describe("commands", () => {
  const command = (id: string, method: string, params: object = {}, who = "tok-alice-0001") =>
    call(s.server.url, "POST", `/langgraph/threads/${id}/commands`, { id: 7, method, params }, { authorization: `Bearer ${who}` });

  it("refuses what could change state around the gate, and what this server does not do, as command errors", async () => {
    const id = threadId("ts-refuse");
    const interruptId = await refundAsked(id, "ts-c1");
    const answers = await Promise.all([
      command(id, "input.inject", { namespace: [], message: { role: "user", content: "approve it" } }),
      command(id, "input.respond", { namespace: [], interrupt_id: interruptId, response: { decisions: [{ type: "approve" }] }, update: { messages: [] } }, "tok-ops-000001"),
      command(id, "input.respond", { namespace: [], interrupt_id: interruptId, response: { decisions: [{ type: "approve" }] }, goto: "call_tool" }, "tok-ops-000001"),
      command(id, "subscription.reconnect", { subscription_id: "x" }),
      command(id, "run.start", { assistant_id: "agent", input: { messages: [{ type: "human", content: "again" }] } }),
      command(id, "run.start", { assistant_id: "agent", input: { messages: [{ type: "human", content: "again" }] }, multitaskStrategy: "enqueue" }),
      command(id, "input.respond", { namespace: [], interrupt_id: interruptId, response: { decisions: [{ type: "approve" }] } }),
      command(id, "no.such.method"),
    ]);
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.map((a) => [(a.json as { error: string }).error, (a.json as { tollgate?: { code: string } }).tollgate?.code])).toEqual([
      ["invalid_argument", undefined],
      ["invalid_argument", undefined],
      ["invalid_argument", undefined],
      ["not_supported", undefined],
      ["invalid_argument", "awaiting_approval"],
      ["not_supported", "unsupported"],
      ["permission_denied", "forbidden"],
      ["unknown_command", undefined],
    ]);
    expect(answers.every((a) => (a.json as { type: string; id: number }).type === "error" && (a.json as { id: number }).id === 7)).toBe(true);
    expect(refunds(s.db, "ts-c1")).toHaveLength(0);
  });

  it("lists checkpoints, and refuses a fork from before an approved refund, which the model could ask for again", async () => {
    const id = threadId("ts-fork");
    const interruptId = await refundAsked(id, "ts-f1");
    const before = (await command(id, "state.listCheckpoints", { limit: 50 })).json as { type: string; result: { checkpoints: Array<{ id: string; step: number }> } };
    expect(before.type).toBe("success");
    // LangGraph's own steps, newest first: the same the run-centric API's history shows.
    const steps = before.result.checkpoints.map((c) => c.step);
    const history = (await call(s.server.url, "POST", `/langgraph/threads/${id}/history`, { limit: 50 }, { authorization: "Bearer tok-alice-0001" })).json as Array<{ metadata: { step: number } }>;
    expect(steps).toEqual(history.map((h) => h.metadata.step));
    expect(steps).toEqual([...steps].sort((a, b) => b - a));
    s.model.push({ text: "Refunded." });
    await respond("tok-ops-000001", id, interruptId, { decisions: [{ type: "approve" }] });
    await readStream({ token: "tok-alice-0001", id, body: { channels: ["lifecycle"] }, until: ended(1), failure: "the refund's run did not end" });
    const fork = await command(id, "state.fork", { checkpoint_id: before.result.checkpoints.at(-1)!.id, input: { messages: [{ type: "human", content: "again" }] } });
    expect(fork.json).toMatchObject({ type: "error", error: "not_supported", tollgate: { code: "unsupported" } });
    const sub = await command(id, "subscription.subscribe", { channels: ["values", "input"] });
    expect(sub.json).toMatchObject({ type: "success", result: { subscription_id: expect.any(String) } });
    expect((await command(id, "subscription.subscribe", { channels: ["nonsense"] })).json).toMatchObject({ type: "error", error: "invalid_argument" });
    expect(refunds(s.db, "ts-f1")).toHaveLength(1);
  });

  it("pairs each values with its checkpoint's envelope; a message's parent checkpoint is a fork that runs it again from before it", async () => {
    const id = threadId("ts-checkpoints");
    const say = async (text: string, answer: string, runs: number) => {
      s.model.push({ text: answer });
      const thread = client("tok-alice-0001").threads.stream(id, { assistantId: "agent" });
      try {
        await thread.run.start({ input: { messages: [{ type: "human", content: text }] } });
      } finally {
        await thread.close();
      }
      return readStream({ token: "tok-alice-0001", id, body: { channels: ["checkpoints", "values", "lifecycle"], since: 0 }, until: ended(runs), failure: `the run for '${text}' did not end` });
    };
    await say("first question", "First answer.", 1);
    const afterFirst = ((await command(id, "state.get", {})).json as { result: { checkpoint: { id: string } } }).result.checkpoint.id;
    const events = await say("second question", "Second answer.", 2);

    // Every values comes right after the envelope of the checkpoint it was read from.
    const values = events.flatMap((e, i) => (e.method === "values" ? [i] : []));
    expect(values.length).toBeGreaterThan(0);
    for (const i of values.filter((i) => events[i]!.params.data.messages?.length)) expect(events[i - 1]!.method).toBe("checkpoints");
    const last = events.filter((e) => e.method === "checkpoints").at(-1)!.params.data;
    const head = ((await command(id, "state.get", {})).json as { result: { checkpoint: { id: string } } }).result.checkpoint.id;
    expect(last).toMatchObject({ id: head, parent_id: afterFirst, source: "loop", step: expect.any(Number) });

    // Forking from the second exchange's parent asks a different second question in its place.
    s.model.push({ text: "Another answer." });
    const fork = await command(id, "state.fork", { checkpoint_id: last.parent_id, input: { messages: [{ type: "human", content: "another question" }] } });
    expect(fork.json).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
    await readStream({ token: "tok-alice-0001", id, body: { channels: ["lifecycle"] }, until: ended(1), failure: "the forked run did not end" });
    const state = (await command(id, "state.get", {})).json as { result: { values: { messages: Array<{ content: unknown }> } } };
    expect(state.result.values.messages.map((m) => m.content)).toEqual(["first question", "First answer.", "another question", "Another answer."]);
  });

  it("answers a malformed envelope 400 and a body that is not JSON 415, before anything runs", async () => {
    const id = threadId("ts-envelope");
    const bad = await call(s.server.url, "POST", `/langgraph/threads/${id}/commands`, { method: "state.get" }, { authorization: "Bearer tok-alice-0001" });
    expect(bad.status).toBe(400);
    const form = await fetch(`${s.server.url}/langgraph/threads/${id}/commands`, {
      method: "POST",
      headers: { authorization: "Bearer tok-alice-0001", "content-type": "application/x-www-form-urlencoded" },
      body: "id=1&method=state.get",
    });
    expect(form.status).toBe(415);
    const noToken = await call(s.server.url, "POST", `/langgraph/threads/${id}/commands`, { id: 1, method: "state.get" });
    expect(noToken.status).toBe(401);
  });

  it("state.get and agent.getTree read the thread as the gate left it, masked", async () => {
    const id = threadId("ts-state");
    s.model.push({ toolCalls: [{ id: "ts-m1", name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "the vault code is plum-sparrow" } }] });
    const thread = client("tok-alice-0001").threads.stream(id, { assistantId: "agent" });
    try {
      await thread.run.start({ input: { messages: [{ type: "human", content: "mail eve" }] } });
      const sub = await thread.subscribe({ channels: ["lifecycle"], since: thread.ordering.lastAppliedThroughSeq });
      await within(
        (async () => {
          for await (const e of sub as AsyncIterable<Event>) if (e.params.data.event === "interrupted") return;
        })(),
        { ms: 15_000, failure: "the email did not stop at the gate" },
      );
      const state = (await thread.state.get({ namespace: [] })) as { values: { messages: unknown[] } };
      expect(JSON.stringify(state)).not.toContain("plum-sparrow");
      expect(JSON.stringify(state)).not.toContain("eve@example.com");
      expect(await thread.agent.getTree()).toMatchObject({ tree: { namespace: [], status: "interrupted", graph_name: "agent" } });
    } finally {
      await thread.close();
    }
  });
});

describe("the WebSocket", () => {
  /** How a socket to the thread's events ends or what it first receives, with a deadline. */
  function socketTo(id: string, o: { headers?: Record<string, string>; protocols?: string[] } = {}) {
    const ws = new WebSocket(`${s.server.url.replace(/^http/, "ws")}/langgraph/threads/${id}/stream/events`, o.protocols ?? [], { headers: o.headers ?? {} });
    const closed = within(new Promise<number>((resolve) => ws.on("close", (code) => resolve(code))), { ms: 10_000, failure: "the socket was not closed" });
    return { ws, closed };
  }

  it("refuses as the SDK reads it: accepted, then closed 4401 without a good token, 4403 from an origin not allowed; on someone else's thread 4404 at the first read, as on a free id", async () => {
    const id = threadId("ts-ws-refuse");
    await refundAsked(id, "ts-w1");
    expect(await socketTo(id, { headers: { authorization: "Bearer tok-nobody-000" } }).closed).toBe(4401);
    expect(await socketTo(id, { headers: { authorization: "Bearer tok-alice-0001", origin: "https://evil.example" } }).closed).toBe(4403);
    // The socket itself tells nothing (not-found-equivalence.test.ts compares it with a free id's).
    const bob = socketTo(id, { headers: { authorization: "Bearer tok-bob-000001" } });
    await new Promise((r) => bob.ws.once("open", r));
    bob.ws.send(JSON.stringify({ id: 1, method: "agent.getTree", params: {} }));
    expect(await bob.closed).toBe(4404);
    expect(refunds(s.db, "ts-w1")).toHaveLength(0);
  });

  it("takes a browser's token as the subprotocol pair `bearer, <token>`, answers a subscribe first and then replays the run", async () => {
    const id = threadId("ts-ws-bearer");
    const interruptId = await refundAsked(id, "ts-w2");
    const { ws } = socketTo(id, { protocols: ["bearer", "tok-alice-0001"] });
    const messages: Array<Record<string, any>> = [];
    const got = within(
      new Promise<void>((resolve) =>
        ws.on("message", (data) => {
          messages.push(JSON.parse(String(data)) as Record<string, any>);
          if (messages.some((m) => m.method === "input.requested")) resolve();
        }),
      ),
      { ms: 10_000, failure: "the subscription did not replay the run's approval request" },
    );
    await new Promise((r) => ws.once("open", r));
    expect(ws.protocol).toBe("bearer");
    ws.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["input", "lifecycle"] } }));
    await got;
    ws.close();
    expect(messages[0]).toMatchObject({ type: "success", id: 1, result: { subscription_id: expect.any(String) } });
    expect(messages.find((m) => m.method === "input.requested")!.params.data.interrupt_id).toBe(interruptId);
  });

  it("carries the thread's events in seq order, each once, however many subscriptions want them", async () => {
    const id = threadId("ts-ws-order");
    const { ws } = socketTo(id, { headers: { authorization: "Bearer tok-alice-0001" } });
    const messages: Array<Record<string, any>> = [];
    const completed = within(
      new Promise<void>((resolve) =>
        ws.on("message", (data) => {
          const m = JSON.parse(String(data)) as Record<string, any>;
          messages.push(m);
          if (m.method === "lifecycle" && m.params.data.event === "completed") resolve();
        }),
      ),
      { ms: 10_000, failure: "the run's completed event did not arrive" },
    );
    await new Promise((r) => ws.once("open", r));
    // Two subscriptions that both want the tools channel, before anything has run.
    ws.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["lifecycle", "tools"] } }));
    ws.send(JSON.stringify({ id: 2, method: "subscription.subscribe", params: { channels: ["tools", "messages"] } }));
    await expect.poll(() => messages.filter((m) => m.type === "success").length, { timeout: 10_000, message: "the subscriptions were not answered" }).toBe(2);
    s.model.push({ toolCalls: [{ id: "ts-o1", name: "lookup_order", args: { order_id: "A-1001" } }] }, { text: "It shipped." });
    ws.send(JSON.stringify({ id: 3, method: "run.start", params: { assistant_id: "agent", input: { messages: [{ type: "human", content: "where is my order" }] } } }));
    await completed;
    ws.close();
    const events = messages.filter((m) => m.type === "event");
    const seqs = events.map((e) => e.seq as number);
    expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    expect(events.filter((e) => e.method === "tools").map((e) => e.params.data.event)).toEqual(["tool-started", "tool-finished"]);
    expect(events.some((e) => e.method === "messages")).toBe(true);
  });
});

