/**
 * A thread someone may not see answers byte for byte like a thread that does not exist: status,
 * every header (but `date` and `content-length`) and the body, with the id swapped. Otherwise
 * probing ids would tell bob which of alice's threads exist, and which wait for a decision.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { RecordedRequest, Turn } from "../helpers/fake-openai.js";
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
