/**
 * A thread someone may not see answers byte for byte like a thread that does not exist: status,
 * every header (but `date` and `content-length`) and the body, with the id swapped. Otherwise
 * probing ids would tell bob which of alice's threads exist, and which wait for a decision. The
 * same holds for the thread-centric protocol at /langgraph, over `POST …/commands`, its SSE stream
 * and its WebSocket: streams and subscriptions accepted and silent, reads the one 404.
 */
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEARTBEAT_FRAME } from "../../src/protocol/index.js";
import { TollgateClient } from "../../src/client/index.js";
import type { RecordedRequest, Turn } from "../helpers/fake-openai.js";
import { within } from "../helpers/within.js";
import { expectNoStackTraces, type Stack, startStack, terminal } from "./support.js";

const ALICE = "tok-alice-00000001";
const BOB = "tok-bob-000000001";
const AUTH_TOKENS = JSON.stringify({
  [ALICE]: { sub: "alice", roles: ["user"] },
  [BOB]: { sub: "bob", roles: ["user"] },
});

function model(req: RecordedRequest): Turn {
  const last = req.messages.at(-1);
  const text = typeof last?.content === "string" ? last.content : "";
  if (last?.role !== "tool" && text.includes("please refund")) {
    return { toolCalls: [{ id: "nf1", name: "refund_order", args: { order_id: "A-1001", amount_cents: 100, reason: "r" } }] };
  }
  return { text: "hello" };
}

let s: Stack;
let alice: TollgateClient;
// Same length, differ only in the tail: any difference in the answers is not the id's length.
const tag = String(process.pid).padStart(7, "0");
const IDLE = `nfe-${tag}-idle-aaaa`;
const WAITING = `nfe-${tag}-wait-aaaa`;
const twin = (id: string) => `${id.slice(0, -4)}zzzz`;
let open: { interrupt_id: string; call_id: string };

beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS }, { script: model });
  alice = new TollgateClient({ baseUrl: s.server.url, token: ALICE });
  terminal(await alice.run(IDLE, "hi").collect(), "done");
  const i = terminal(await alice.run(WAITING, "please refund").collect(), "interrupt");
  open = { interrupt_id: i.interrupt_id, call_id: i.calls[0]!.call_id };
  expect((await alice.getThread(WAITING)).status).toBe("waiting_human");
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
});

interface Answer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** Bob's raw answer, without the headers that may differ for reasons other than the thread. */
async function asBob(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(s.server.url + path, {
    method,
    headers: { authorization: `Bearer ${BOB}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    headers: headerList(res.headers).filter(([k]) => k !== "date" && k !== "content-length"),
    body: await res.text(),
  };
}

/** Every header, as `[...headers]` gives them (sorted, lower-case); the lib types lack Headers' iterator. */
function headerList(h: Headers): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  h.forEach((value, key) => out.push([key, value]));
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `a` as it would read had it been about `to` instead of `from`. */
const swapped = (a: Answer, from: string, to: string): Answer => ({
  status: a.status,
  headers: a.headers.map(([k, v]) => [k, v.split(from).join(to)]),
  body: a.body.split(from).join(to),
});

const resumeBody = () => ({ interrupt_id: open.interrupt_id, decisions: [{ call_id: open.call_id, approved: true }] });

/** Endpoints that name an existing thread; `path` and `body` for a given id. */
const ENDPOINTS: Array<{ name: string; method: string; path: (id: string) => string; body?: (id: string) => unknown }> = [
  { name: "GET /threads/:id", method: "GET", path: (id) => `/threads/${id}` },
  { name: "GET /threads/:id/stream", method: "GET", path: (id) => `/threads/${id}/stream` },
  { name: "GET /threads/:id/audit", method: "GET", path: (id) => `/threads/${id}/audit` },
  { name: "POST /threads/:id/resume", method: "POST", path: (id) => `/threads/${id}/resume`, body: resumeBody },
  { name: "POST /threads/:id/cancel", method: "POST", path: (id) => `/threads/${id}/cancel` },
];

/** Endpoints that create a thread on a free id: their "missing" answer is the canonical one below. */
const CREATING: typeof ENDPOINTS = [
  { name: "POST /threads/:id/runs", method: "POST", path: (id) => `/threads/${id}/runs`, body: () => ({ message: "hi" }) },
  { name: "POST /threads {thread_id}", method: "POST", path: () => "/threads", body: (id) => ({ thread_id: id }) },
];

const dbState = () => ({
  threads: s.db.prepare("SELECT * FROM threads ORDER BY thread_id").all(),
  interrupts: s.db.prepare("SELECT interrupt_id, status FROM interrupts ORDER BY interrupt_id").all(),
  runs: s.db.countRows("runs"),
  audit: s.db.countRows("audit"),
  refunds: s.db.countRows("refunds"),
});

describe("bob cannot tell alice's threads from missing ones", () => {
  it("the missing thread's answers are the one thread_not_found, on every endpoint", async () => {
    const missing = twin(IDLE);
    const first = await asBob("GET", `/threads/${missing}`);
    expect(first.status).toBe(404);
    expect(JSON.parse(first.body)).toEqual({ error: { code: "thread_not_found", message: `Thread ${missing} not found` } });
    for (const e of ENDPOINTS) {
      expect(await asBob(e.method, e.path(missing), e.body?.(missing)), e.name).toEqual(first);
    }
  });

  for (const [kind, id] of [["idle", IDLE], ["waiting_human", WAITING]] as const) {
    for (const e of ENDPOINTS) {
      it(`${e.name} on alice's ${kind} thread = on a missing id`, async () => {
        const before = dbState();
        const mine = await asBob(e.method, e.path(id), e.body?.(id));
        const missing = twin(id);
        const none = await asBob(e.method, e.path(missing), e.body?.(missing));
        expect(none.status).toBe(404);
        expect(JSON.parse(none.body).error.code).toBe("thread_not_found");
        expect(mine).toEqual(swapped(none, missing, id));
        expect(dbState()).toEqual(before);
      });
    }
    for (const e of CREATING) {
      // On a free id these create bob's own thread, so the missing-thread answer to compare with
      // is the one every other endpoint gives (asserted identical across endpoints above).
      it(`${e.name} on alice's ${kind} thread = the missing-thread answer`, async () => {
        const before = dbState();
        const mine = await asBob(e.method, e.path(id), e.body?.(id));
        const missing = twin(id);
        const none = await asBob("POST", `/threads/${missing}/cancel`);
        expect(none.status).toBe(404);
        expect(mine).toEqual(swapped(none, missing, id));
        expect(dbState()).toEqual(before);
      });
    }
  }

  it("alice's threads are as she left them", async () => {
    expect(await alice.getThread(IDLE)).toMatchObject({ status: "idle", owner: "alice" });
    expect(await alice.getThread(WAITING)).toMatchObject({ status: "waiting_human", pending: { interrupt_id: open.interrupt_id } });
    expect(s.db.rows("refunds", "call_id = ?", open.call_id)).toHaveLength(0);
  });

  it("a probe through support-1..100 (one of them alice's) gets 100 identical answers modulo id", async () => {
    const hers = "support-37";
    await alice.createThread({ thread_id: hers });
    expect((await alice.getThread(hers)).owner).toBe("alice");
    const before = dbState();
    // Not POST …/runs or POST /threads: on the 99 free ids those would create bob's own threads.
    for (const e of ENDPOINTS) {
      const seen = new Map<string, string[]>();
      for (let n = 1; n <= 100; n++) {
        const id = `support-${n}`;
        const key = JSON.stringify(swapped(await asBob(e.method, e.path(id), e.body?.(id)), id, "<id>"));
        seen.set(key, [...(seen.get(key) ?? []), id]);
      }
      const kinds = [...seen.values()].map((ids) => ids.slice(0, 3));
      expect(seen.size, `${e.name}: ${seen.size} kinds of answer, e.g. for ${JSON.stringify(kinds)}`).toBe(1);
      const [only] = [...seen.keys()];
      const answer = JSON.parse(only!) as Answer;
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toEqual({ error: { code: "thread_not_found", message: "Thread <id> not found" } });
    }
    expect(dbState()).toEqual(before);
  });
});

describe("the thread-centric protocol tells bob nothing of alice's threads either", () => {
  const commandOn = (id: string, method: string, params: object) => asBob("POST", `/langgraph/threads/${id}/commands`, { id: 5, method, params });
  /** Ids aside: a subscription's id is new at each subscribe. */
  const idsAside = (text: string) => text.replace(/"subscription_id":"[^"]+"/g, '"subscription_id":"<sub>"');
  const aside = (a: Answer): Answer => ({ ...a, body: idsAside(a.body) });
  const ALL = ["lifecycle", "messages", "tools", "input", "values", "updates"];

  /** Every command but run.start, whose creating a thread on a free id is the one difference allowed. */
  const COMMANDS: Array<[string, () => object]> = [
    ["state.get", () => ({})],
    ["state.listCheckpoints", () => ({ limit: 5 })],
    ["state.fork", () => ({ checkpoint_id: "cp-none", input: { messages: [] } })],
    ["agent.getTree", () => ({})],
    ["input.respond", () => ({ namespace: [], interrupt_id: open.interrupt_id, response: { decisions: [{ type: "approve" }] } })],
    ["subscription.subscribe", () => ({ channels: ALL })],
    ["subscription.subscribe", () => ({ channels: ["lifecycle"], since: 0 })],
    ["subscription.unsubscribe", () => ({ subscription_id: "sub-1" })],
    ["subscription.reconnect", () => ({ subscription_id: "sub-1" })],
    ["input.inject", () => ({ namespace: [], message: { role: "user", content: "hi" } })],
  ];

  /** The thread-centric SSE stream of `id` as `token`'s holder opens it: every channel, from the start. */
  const openEvents = (token: string, id: string, signal: AbortSignal): Promise<Response> =>
    fetch(`${s.server.url}/langgraph/threads/${id}/stream/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ channels: ALL, since: 0 }),
      signal,
    });

  /** alice's own SSE stream of her thread, read through its latest stop: what bob's would show by then, if anything. */
  async function aliceReadsAll(id: string): Promise<void> {
    const ac = new AbortController();
    const res = await openEvents(ALICE, id, ac.signal);
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    try {
      await within(
        (async () => {
          while (!/"event":"(completed|interrupted)"/.test(text)) {
            const r = await reader.read();
            if (r.done) throw new Error("alice's stream closed");
            text += r.value;
          }
        })(),
        { ms: 10_000, failure: `alice's stream of ${id} did not replay its run` },
      );
    } finally {
      ac.abort();
    }
  }

  /** bob's SSE stream of `id`, held open until `meanwhile` is done: its status, headers and body, heartbeats aside. */
  async function bobStreams(id: string, meanwhile: () => Promise<void>): Promise<Answer> {
    const ac = new AbortController();
    const res = await openEvents(BOB, id, ac.signal);
    let body = "";
    const read = (async () => {
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) body += r.value;
    })().catch(() => undefined);
    await meanwhile();
    ac.abort();
    await read;
    return { status: res.status, headers: headerList(res.headers).filter(([k]) => k !== "date" && k !== "content-length"), body: body.split(HEARTBEAT_FRAME).join("") };
  }

  /**
   * bob's WebSocket to `id`: subscribes to everything from the start, waits while alice reads her
   * thread `hers` whole, unsubscribes, then reads the state. What came, ids aside, and how it closed.
   */
  async function bobSocket(id: string, hers: string): Promise<{ messages: string[]; code: number }> {
    const ws = new WebSocket(`${s.server.url.replace(/^http/, "ws")}/langgraph/threads/${id}/stream/events`, { headers: { authorization: `Bearer ${BOB}` } });
    const messages: string[] = [];
    let onMessage = () => {};
    ws.on("message", (data) => {
      messages.push(String(data));
      onMessage();
    });
    const closed = within(new Promise<number>((resolve) => ws.on("close", (code) => resolve(code))), { ms: 10_000, failure: `bob's socket to ${id} was not closed` });
    /** The answer to command `n`, or undefined once the socket is closed without one. */
    const answer = (n: number) =>
      Promise.race([
        new Promise<Record<string, any>>((resolve) => {
          const look = () => {
            const m = messages.map((t) => JSON.parse(t) as Record<string, any>).find((x) => x.id === n);
            if (m) resolve(m);
          };
          onMessage = look;
          look();
        }),
        closed.then(() => undefined),
      ]);
    await within(new Promise((resolve) => ws.once("open", resolve)), { ms: 5_000, failure: `bob's socket to ${id} did not open` });
    ws.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ALL, since: 0 } }));
    const subscribed = await answer(1);
    await aliceReadsAll(hers);
    if (ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ id: 2, method: "subscription.unsubscribe", params: { subscription_id: subscribed?.result?.subscription_id } }));
      await answer(2);
      ws.send(JSON.stringify({ id: 3, method: "state.get", params: {} }));
    }
    return { code: await closed, messages: messages.map(idsAside) };
  }

  for (const [kind, id] of [["idle", IDLE], ["waiting_human", WAITING]] as const) {
    for (const [method, params] of COMMANDS) {
      it(`${method} (${params.toString().slice(6, 60)}) on alice's ${kind} thread = on a missing id`, async () => {
        const before = dbState();
        const mine = aside(await commandOn(id, method, params()));
        const missing = twin(id);
        const none = aside(await commandOn(missing, method, params()));
        expect(mine).toEqual(swapped(none, missing, id));
        expect(dbState()).toEqual(before);
      });
    }

    it(`run.start on alice's ${kind} thread = the missing-thread answer, and starts nothing`, async () => {
      const before = dbState();
      const mine = await commandOn(id, "run.start", { assistant_id: "agent", input: { messages: [{ type: "human", content: "hi" }] } });
      const missing = twin(id);
      const none = await asBob("POST", `/threads/${missing}/cancel`);
      expect(mine).toEqual(swapped(none, missing, id));
      expect(dbState()).toEqual(before);
    });

    it(`the SSE stream of alice's ${kind} thread = of a missing id: accepted, and silent while her log is read`, async () => {
      const missing = twin(id);
      const [mine, none] = await Promise.all([bobStreams(id, () => aliceReadsAll(id)), bobStreams(missing, () => aliceReadsAll(id))]);
      expect(mine.status).toBe(200);
      expect(mine).toEqual(swapped(none, missing, id));
      expect(mine.body).toBe("");
    });

    it(`a WebSocket to alice's ${kind} thread = to a missing id: subscribe and unsubscribe answered alike, silent, a read closes it 4404`, async () => {
      const before = dbState();
      const missing = twin(id);
      const mine = await bobSocket(id, id);
      const none = await bobSocket(missing, id);
      expect(mine).toEqual({ code: none.code, messages: none.messages.map((m) => m.split(missing).join(id)) });
      expect(mine.code).toBe(4404);
      expect(mine.messages.map((m) => JSON.parse(m) as Record<string, any>)).toEqual([
        { type: "success", id: 1, result: { subscription_id: "<sub>", replayed_events: 0 }, meta: { thread_id: id, applied_through_seq: 0 } },
        { type: "success", id: 2, result: {}, meta: { thread_id: id, applied_through_seq: 0 } },
      ]);
      expect(dbState()).toEqual(before);
    });
  }

  it("a probe of support-1..100 (one of them alice's) over the protocol's commands gets 100 identical answers modulo id", async () => {
    const hers = "support-37";
    // Made by the probe above, or here when this test runs alone.
    await alice.createThread({ thread_id: hers }).catch(() => undefined);
    expect((await alice.getThread(hers)).owner).toBe("alice");
    const before = dbState();
    for (const [method, params] of COMMANDS) {
      const seen = new Set<string>();
      for (let n = 1; n <= 100; n++) {
        const id = `support-${n}`;
        seen.add(JSON.stringify(swapped(aside(await commandOn(id, method, params())), id, "<id>")));
      }
      expect(seen.size, `${method}: ${[...seen].join("\n")}`).toBe(1);
    }
    expect(dbState()).toEqual(before);
  });
});
