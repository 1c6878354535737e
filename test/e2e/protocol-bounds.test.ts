/**
 * What one WebSocket of the thread-centric protocol may cost the server, with a real `ws` client
 * against a real server: a message past the HTTP body limit is refused with 1009 as its length is
 * read; a socket whose reader does not read is closed with 1013 once 4 MiB wait unsent and none
 * goes (a reader that reads is only slowed), and the client resumes with `since` missing nothing; at most 64 subscriptions; a subscription the socket
 * already carries replays nothing again.
 */
import http from "node:http";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SOCKET_MESSAGE_BYTES, MAX_SUBSCRIPTIONS, MAX_UNSENT_BYTES, STALLED_AFTER_MS } from "../../src/faces/langgraph/protocol/socket-bounds.js";
import { within } from "../helpers/within.js";
import { call, expectNoStackTraces, type Stack, startStack, threadId } from "./support.js";

const ALICE = "tok-alice-0001";
const ENV = { AUTH_TOKENS: JSON.stringify({ [ALICE]: { sub: "alice", roles: ["user"] } }) };

let s: Stack;
beforeAll(async () => {
  s = await startStack(ENV);
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
});

type Message = Record<string, any>;

/** A socket to the thread's events as alice, with what it received and how it closed. */
function socketTo(id: string) {
  const ws = new WebSocket(`${s.server.url.replace(/^http/, "ws")}/langgraph/threads/${id}/stream/events`, { headers: { authorization: `Bearer ${ALICE}` } });
  const messages: Message[] = [];
  const listeners = new Set<() => void>();
  ws.on("message", (data) => {
    messages.push(JSON.parse(String(data)) as Message);
    for (const l of listeners) l();
  });
  const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
  const opened = within(new Promise((resolve) => ws.once("open", resolve)), { ms: 5_000, failure: "the socket did not open" });
  /** Resolves once what came satisfies `done`. */
  const until = (done: (m: Message[]) => boolean, failure: string, ms = 15_000) =>
    within(
      new Promise<Message[]>((resolve) => {
        const look = () => {
          if (!done(messages)) return;
          listeners.delete(look);
          resolve(messages);
        };
        listeners.add(look);
        look();
      }),
      { ms, failure },
    );
  const answer = (n: number) => until((m) => m.some((x) => x.id === n && x.type !== "event"), `command ${n} was not answered`).then((m) => m.find((x) => x.id === n && x.type !== "event")!);
  const command = (n: number, method: string, params: object = {}) => {
    ws.send(JSON.stringify({ id: n, method, params }));
    return answer(n);
  };
  return { ws, messages, opened, until, answer, command, closed: () => within(closed, { ms: 15_000, failure: "the socket was not closed" }) };
}

const events = (m: Message[]) => m.filter((x) => x.type === "event");
const completed = (n: number) => (m: Message[]) => events(m).filter((e) => e.method === "lifecycle" && e.params.namespace.length === 0 && e.params.data.event === "completed").length >= n;

/** alice's SSE stream of the thread from `since`, read to the end of its `runs`-th completed run; every event. */
async function streamed(id: string, o: { channels: string[]; since: number; runs: number }): Promise<Message[]> {
  const ac = new AbortController();
  const res = await fetch(`${s.server.url}/langgraph/threads/${id}/stream/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
    body: JSON.stringify({ channels: o.channels, since: o.since }),
    signal: ac.signal,
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: Message[] = [];
  let buffer = "";
  try {
    await within(
      (async () => {
        while (!completed(o.runs)(out)) {
          const { value, done } = await reader.read();
          if (done) throw new Error("the stream closed");
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const data = /^data: (.+)$/m.exec(buffer.slice(0, end))?.[1];
            buffer = buffer.slice(end + 2);
            if (data) out.push(JSON.parse(data) as Message);
          }
        }
      })(),
      { ms: 60_000, failure: "the thread's stream did not reach the run's end" },
    );
  } finally {
    ac.abort();
  }
  return out;
}

const runStart = (id: string, text: string) =>
  call(s.server.url, "POST", `/langgraph/threads/${id}/commands`, { id: 1, method: "run.start", params: { assistant_id: "agent", input: { messages: [{ type: "human", content: text }] } } }, { authorization: `Bearer ${ALICE}` });

/**
 * A POST on a connection of its own: the server answers an oversized body before reading it and
 * drops the connection, which a pooled one would carry into the next request.
 */
function postAlone(path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.server.url}${path}`, { method: "POST", agent: false, headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    // The server may close before the whole body is written: its answer is what counts.
    req.on("error", reject);
    req.end(body);
  });
}

/** A command of exactly `bytes` bytes, padded; `subscription.reconnect` answers without a thread. */
function padded(bytes: number): string {
  const head = '{"id":1,"method":"subscription.reconnect","params":{"pad":"';
  const tail = '"}}';
  return head + "x".repeat(bytes - head.length - tail.length) + tail;
}

describe("a WebSocket's bounds", () => {
  it("a message past the HTTP body limit is refused with 1009 as its length is read; one at the limit is answered, on both paths", async () => {
    const id = threadId("pb-size");
    const at = socketTo(id);
    await at.opened;
    at.ws.send(padded(MAX_SOCKET_MESSAGE_BYTES));
    expect(await at.answer(1)).toMatchObject({ type: "error", id: 1, error: "not_supported" });
    at.ws.close();

    const over = socketTo(id);
    await over.opened;
    over.ws.send(padded(MAX_SOCKET_MESSAGE_BYTES + 1));
    expect(await over.closed()).toBe(1009);

    // A frame that announces 40 MB and sends a few bytes: refused on its header, nothing waited for.
    const announced = socketTo(id);
    await announced.opened;
    const header = Buffer.alloc(14);
    header[0] = 0x81; // the final frame of a text message
    header[1] = 0x80 | 127; // masked, a 64-bit length follows
    header.writeBigUInt64BE(40_000_000n, 2);
    (announced.ws as unknown as { _socket: NodeJS.WritableStream })._socket.write(Buffer.concat([header, Buffer.from("{}")]));
    expect(await announced.closed()).toBe(1009);

    // The same limit as an HTTP body's.
    const path = `/langgraph/threads/${id}/commands`;
    const atLimit = await call(s.server.url, "POST", path, padded(MAX_SOCKET_MESSAGE_BYTES), { authorization: `Bearer ${ALICE}` });
    expect(atLimit.json).toMatchObject({ type: "error", error: "not_supported" });
    const overLimit = await postAlone(path, padded(MAX_SOCKET_MESSAGE_BYTES + 1));
    expect([overLimit.status, JSON.parse(overLimit.body).error.message]).toEqual([400, "Request body is too large"]);

    // The server is up, and the next socket is answered.
    expect((await call(s.server.url, "GET", "/healthz")).status).toBe(200);
    const next = socketTo(id);
    await next.opened;
    expect(await next.command(2, "subscription.reconnect")).toMatchObject({ type: "error", error: "not_supported" });
    next.ws.close();
  });

  it("a socket whose reader does not read while a run streams is closed with 1013; a new one from `since` gets the rest, no gap, no repeat", async () => {
    const id = threadId("pb-slow");
    const channels = ["lifecycle", "messages"];
    const slow = socketTo(id);
    await slow.opened;
    expect(await slow.command(1, "subscription.subscribe", { channels })).toMatchObject({ type: "success" });
    // The client stops reading: what the server sends piles up, past the kernel's buffers.
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    s.model.push({ text: "y".repeat(4 * MAX_UNSENT_BYTES), chunkSize: 4096 });
    expect((await runStart(id, "write a long one")).json).toMatchObject({ type: "success" });
    const all = await streamed(id, { channels, since: 0, runs: 1 });
    // The server gives up on it once nothing has gone for a while; the client reads again after.
    await expect
      .poll(() => s.server.stdout() + s.server.stderr(), { timeout: STALLED_AFTER_MS + 10_000, interval: 200, message: "the stalled socket was not closed" })
      .toContain("protocol socket closed: its reader does not read");
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect(await slow.closed()).toBe(1013);
    const first = events(slow.messages);
    expect(first.length).toBeLessThan(all.length);
    const rest = socketTo(id);
    await rest.opened;
    expect(await rest.command(1, "subscription.subscribe", { channels, since: first.at(-1)?.seq ?? 0 })).toMatchObject({ type: "success" });
    await rest.until(completed(1), "the resumed socket did not reach the run's end", 60_000);
    rest.ws.close();
    expect([...first, ...events(rest.messages)].map((e) => e.event_id)).toEqual(all.map((e) => e.event_id));
    // Read at once, the whole run (far more than 4 MiB) goes through one socket that reads.
    const fast = socketTo(id);
    await fast.opened;
    await fast.command(1, "subscription.subscribe", { channels, since: 0 });
    await fast.until(completed(1), "a socket that reads did not get the whole run", 60_000);
    fast.ws.close();
    expect(events(fast.messages).map((e) => e.event_id)).toEqual(all.map((e) => e.event_id));
    expect((await call(s.server.url, "GET", "/healthz")).status).toBe(200);
  }, 120_000);

  it(`holds at most ${MAX_SUBSCRIPTIONS} subscriptions: the next is a command error, limit_exceeded, until one goes`, async () => {
    const id = threadId("pb-many");
    const socket = socketTo(id);
    await socket.opened;
    const answers = await Promise.all(Array.from({ length: MAX_SUBSCRIPTIONS + 1 }, (_, n) => socket.command(n + 1, "subscription.subscribe", { channels: ["lifecycle"] })));
    expect(answers.filter((a) => a.type === "success")).toHaveLength(MAX_SUBSCRIPTIONS);
    const refused = answers.filter((a) => a.type === "error");
    expect(refused).toEqual([{ type: "error", id: expect.any(Number), error: "invalid_argument", message: expect.any(String), tollgate: { code: "limit_exceeded" } }]);
    expect(await socket.command(100, "subscription.unsubscribe", { subscription_id: answers[0]!.result.subscription_id })).toMatchObject({ type: "success" });
    expect(await socket.command(101, "subscription.subscribe", { channels: ["lifecycle"] })).toMatchObject({ type: "success" });
    expect(await socket.command(102, "subscription.subscribe", { channels: ["lifecycle"] })).toMatchObject({ type: "error", tollgate: { code: "limit_exceeded" } });
    socket.ws.close();
  });

  it("a second identical subscribe replays nothing the socket carried; a wider one only what it adds", async () => {
    const id = threadId("pb-again");
    s.model.push({ toolCalls: [{ id: "pb-t1", name: "lookup_order", args: { order_id: "A-1001" } }] }, { text: "It shipped." });
    expect((await runStart(id, "where is my order")).json).toMatchObject({ type: "success" });
    const before = await streamed(id, { channels: ["lifecycle", "messages", "tools"], since: 0, runs: 1 });

    const socket = socketTo(id);
    await socket.opened;
    const same = { channels: ["lifecycle", "messages"], since: 0 };
    await socket.command(1, "subscription.subscribe", same);
    await socket.until(completed(1), "the first subscription did not replay the run");
    const once = events(socket.messages).length;
    expect(once).toBe(before.filter((e) => e.method !== "tools").length);
    for (let n = 2; n <= 20; n++) expect(await socket.command(n, "subscription.subscribe", same)).toMatchObject({ type: "success" });
    // Wider: lifecycle again, and tools, which only it adds.
    await socket.command(21, "subscription.subscribe", { channels: ["lifecycle", "tools"], since: 0 });
    // A second run through the same socket: whatever a replay would have sent comes before it.
    s.model.push({ text: "Anything else?" });
    expect(await socket.command(22, "run.start", { assistant_id: "agent", input: { messages: [{ type: "human", content: "thanks" }] } })).toMatchObject({ type: "success" });
    await socket.until(completed(2), "the second run did not end on the socket");
    socket.ws.close();
    const ids = events(socket.messages).map((e) => e.event_id);
    expect(ids).toEqual([...new Set(ids)]);
    // The tools subscription added the first run's tool events, once.
    const firstRun = new Set(before.map((e) => e.event_id));
    expect(events(socket.messages).filter((e) => firstRun.has(e.event_id)).map((e) => e.event_id).sort()).toEqual([...firstRun].sort());
  });
});
