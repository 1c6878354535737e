/**
 * Identity and access, as a matrix: principals × endpoints, each row one request with the status
 * (and error code) it must get. Every refused row (4xx) must also leave the database exactly as it
 * was: threads (status, owner, updated_at, …), interrupts, runs, audit, refunds, outbox, ledger.
 *
 * Rows run in order within a group; each group gets fresh fixtures (threads owned by alice: idle,
 * waiting on a `refund_order` (policy approver), waiting on a `send_email` (policy owner), …).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { RecordedRequest, Turn } from "../helpers/fake-openai.js";
import { call, expectNoStackTraces, type Stack, startStack, terminal, threadId } from "./support.js";

const TOKEN = {
  owner: "tok-alice-00000001",
  other: "tok-bob-000000001",
  approver: "tok-ops-000000001",
  admin: "tok-root-00000001",
  /** Both a user and an approver: four eyes must bind it on its own threads. */
  lead: "tok-carol-0000001",
} as const;
const SUB = { owner: "alice", other: "bob", approver: "ops", admin: "root", lead: "carol" } as const;
const ROLES = { owner: ["user"], other: ["user"], approver: ["approver"], admin: ["admin"], lead: ["user", "approver"] } as const;
const AUTH_TOKENS = JSON.stringify(
  Object.fromEntries(Object.entries(TOKEN).map(([k, t]) => [t, { sub: SUB[k as keyof typeof SUB], roles: ROLES[k as keyof typeof ROLES] }])),
);

type Who = keyof typeof TOKEN | "anonymous" | "bad" | "basic";
const HEADERS: Record<Who, Record<string, string>> = {
  owner: { authorization: `Bearer ${TOKEN.owner}` },
  other: { authorization: `Bearer ${TOKEN.other}` },
  approver: { authorization: `Bearer ${TOKEN.approver}` },
  admin: { authorization: `Bearer ${TOKEN.admin}` },
  lead: { authorization: `Bearer ${TOKEN.lead}` },
  anonymous: {},
  bad: { authorization: "Bearer not-a-known-token-123" },
  // A known token under the wrong scheme is no bearer token at all.
  basic: { authorization: `Basic ${TOKEN.owner}` },
};

const EMAIL_ARGS = { to: "ada@example.com", subject: "s", body: "b" };
const ORDERS = ["A-1001", "A-1002", "A-1003", "A-1004", "A-1005"];
/**
 * Each refund on an order of its own, in turn: two refunds of one order waiting together would
 * make the later one stale (its preview no longer holds once the other lands), which is another
 * suite's business (previews.test.ts).
 */
const refundArgs = (n: number) => ({ order_id: ORDERS[n % ORDERS.length]!, amount_cents: 100, reason: "r" });

/**
 * The model, by what it is asked: "please refund" / "please email" / "please both" open an
 * interrupt; after a tool result (an approval ran) it says "done"; anything else gets "hello".
 * A function rather than a queue, so a row that wrongly succeeds cannot shift later turns.
 */
let callSeq = 0;
function model(req: RecordedRequest): Turn {
  const last = req.messages.at(-1);
  if (last?.role === "tool") return { text: "done" };
  const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  const refund = { id: `rf${++callSeq}`, name: "refund_order", args: refundArgs(callSeq) };
  const email = { id: `em${++callSeq}`, name: "send_email", args: EMAIL_ARGS };
  if (text.includes("please both")) return { toolCalls: [refund, email] };
  if (text.includes("please refund")) return { toolCalls: [refund] };
  if (text.includes("please email")) return { toolCalls: [email] };
  return { text: "hello" };
}

let s: Stack;
const clients = {} as Record<"owner" | "admin" | "lead", TollgateClient>;
beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS }, { script: model });
  clients.owner = new TollgateClient({ baseUrl: s.server.url, token: TOKEN.owner });
  clients.admin = new TollgateClient({ baseUrl: s.server.url, token: TOKEN.admin });
  clients.lead = new TollgateClient({ baseUrl: s.server.url, token: TOKEN.lead });
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
});

// ---------------------------------------------------------------------------------------------
// Fixtures

interface Fixture {
  id: string;
  /** The open interrupt ("" for an idle thread) and its call ids. */
  interrupt: string;
  calls: string[];
}
type Fx = Record<string, Fixture>;

/** What a group needs: name → [creator, what the first message asks for]. */
const KINDS = {
  idle: ["owner", "hi"],
  refund: ["owner", "please refund"],
  refund2: ["owner", "please refund"],
  refund3: ["owner", "please refund"],
  email: ["owner", "please email"],
  email2: ["owner", "please email"],
  mixed: ["owner", "please both"],
  rootRefund: ["admin", "please refund"],
  leadRefund: ["lead", "please refund"],
} as const;
type Kind = keyof typeof KINDS;

async function setup(label: string, needs: Kind[]): Promise<Fx> {
  const fx: Fx = {};
  for (const name of needs) {
    const [by, message] = KINDS[name];
    const id = threadId(`${label}-${name}`);
    const events = await clients[by].run(id, message).collect();
    if (name === "idle") {
      terminal(events, "done");
      fx[name] = { id, interrupt: "", calls: [] };
    } else {
      const i = terminal(events, "interrupt");
      fx[name] = { id, interrupt: i.interrupt_id, calls: i.calls.map((c) => c.call_id) };
    }
  }
  return fx;
}

// ---------------------------------------------------------------------------------------------
// Database snapshots and settling

function snapshot() {
  return {
    threads: s.db
      .prepare(
        "SELECT thread_id, status, owner, updated_at, created_at, latest_run_id, open_interrupt_id, last_outcome, title, metadata FROM threads ORDER BY thread_id",
      )
      .all(),
    interrupts: s.db.prepare("SELECT interrupt_id, status, decided_at, decisions FROM interrupts ORDER BY interrupt_id").all(),
    runs: s.db.countRows("runs"),
    audit: s.db.countRows("audit"),
    refunds: s.db.countRows("refunds"),
    outbox: s.db.countRows("outbox"),
    ledger: s.db.countRows("ledger"),
  };
}

/** Waits until no run is in flight, so the next row's snapshot is not taken mid-run. */
async function settle(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const running = s.db.prepare("SELECT count(*) AS n FROM threads WHERE status = 'running'").get() as { n: number };
    const open = s.db.prepare("SELECT count(*) AS n FROM runs WHERE ended_at IS NULL").get() as { n: number };
    if (running.n === 0 && open.n === 0) return;
    if (Date.now() > deadline) throw new Error("runs did not settle");
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---------------------------------------------------------------------------------------------
// Requests and rows

type Res = Awaited<ReturnType<typeof call>>;

const send = (who: Who, method: string, path: string, body?: unknown, accept?: string): Promise<Res> =>
  call(s.server.url, method, path, body, { ...HEADERS[who], ...(accept ? { accept } : {}) });

interface Ctx {
  fx: Fx;
  /** A fresh, unused thread id for this row (`{free}` in path or body). */
  free: string;
}

interface Row {
  who: Who;
  method: "GET" | "POST";
  /** `{name}` is fixture `name`'s thread id; `{free}` a fresh id. */
  path: string;
  body?: unknown | ((c: Ctx) => unknown);
  accept?: string;
  expect: number;
  code?: string;
  /** Extra assertions, run after the server settled. */
  check?: (r: Res, c: Ctx) => void | Promise<void>;
}

const fill = (path: string, c: Ctx) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === "free") return c.free;
    const f = c.fx[name];
    if (!f) throw new Error(`no fixture ${name}`);
    return f.id;
  });

/** A resume body deciding every call of fixture `name`'s interrupt (or the given `calls`, or `only` those whose id starts so). */
const decide = (name: string, approved = true, o: { interrupt?: string; calls?: string[]; only?: string; edit?: object } = {}) =>
  described(
    `${approved ? "approve" : "reject"}${o.interrupt ? ` interrupt:${o.interrupt}` : ""}${o.calls ? ` calls:${o.calls}` : ""}${o.only ? ` only:${o.only}` : ""}${o.edit ? ` edit:${JSON.stringify(o.edit)}` : ""}`,
    (c: Ctx) => ({
      interrupt_id: o.interrupt ?? c.fx[name]!.interrupt,
      decisions: (o.calls ?? c.fx[name]!.calls.filter((id) => !o.only || id.startsWith(o.only))).map((call_id) => ({
        call_id,
        approved,
        ...(o.edit ? { edited_args: o.edit } : {}),
      })),
    }),
  );
const newThread = (name: string) => described(`{thread_id:{${name}}}`, (c: Ctx) => ({ thread_id: name === "free" ? c.free : c.fx[name]!.id }));
/** A body builder that says what it sends, for the row's name. */
function described<T>(desc: string, f: (c: Ctx) => T): ((c: Ctx) => T) & { desc: string } {
  return Object.assign(f, { desc });
}
const MSG = { message: "hi" };
const IDLE_RESUME = { interrupt_id: "x", decisions: [] };

async function runRow(row: Row, fx: Fx): Promise<void> {
  const c: Ctx = { fx, free: threadId("free") };
  const path = fill(row.path, c);
  const body = typeof row.body === "function" ? (row.body as (c: Ctx) => unknown)(c) : row.body;
  await settle();
  const before = snapshot();
  const r = await send(row.who, row.method, path, body, row.accept);
  await settle();
  expect(r.status, r.text.slice(0, 300)).toBe(row.expect);
  if (row.code) expect(r.json?.error?.code, r.text.slice(0, 300)).toBe(row.code);
  if (r.status === 401) expect(r.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  if (row.code === "thread_not_found") {
    const target = path.split("/")[2] ?? (body as { thread_id: string }).thread_id;
    expect(r.json.error.message).toBe(`Thread ${target} not found`);
  }
  if (r.status >= 400) expect(snapshot(), "a refused request changed the database").toEqual(before);
  await row.check?.(r, c);
}

const bodyDesc = (b: Row["body"]) =>
  b === undefined ? "" : typeof b === "string" ? " <bad json>" : typeof b === "function" ? ` ${(b as { desc?: string }).desc ?? ""}` : ` ${JSON.stringify(b)}`;
const label = (r: Row) => `${r.who.padEnd(9)} ${r.method.padEnd(4)} ${r.path}${bodyDesc(r.body)} → ${r.expect}${r.code ? ` ${r.code}` : ""}`;

function group(title: string, needs: Kind[], rows: Row[]): void {
  describe(title, () => {
    const fx: Fx = {};
    beforeAll(async () => {
      Object.assign(fx, await setup(title.split(" ")[0]!.replace(/[^A-Za-z0-9]/g, "").toLowerCase(), needs));
    });
    it.each(rows.map((r) => [label(r), r] as const))("%s", async (_, row) => {
      await runRow(row, fx);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Checks used by rows

const threadRow = (id: string) => s.db.rows<{ owner: string; status: string }>("threads", "thread_id = ?", id)[0];
const owned = (sub: string) => s.db.rows<{ thread_id: string }>("threads", "owner = ?", sub).map((t) => t.thread_id);
const listed = (r: Res) => (r.json.items as Array<{ thread_id: string }>).map((t) => t.thread_id);
const approvalIds = (r: Res) => (r.json.items as Array<{ interrupt_id: string }>).map((i) => i.interrupt_id);

const notCreated = (_: Res, c: Ctx) => expect(threadRow(c.free)).toBeUndefined();
const createdBy = (sub: string) => (_: Res, c: Ctx) => expect(threadRow(c.free)).toMatchObject({ owner: sub, status: "idle" });
const viewOf = (name: string, status: string) => (r: Res, c: Ctx) =>
  expect(r.json).toMatchObject({ thread_id: c.fx[name]!.id, owner: "alice", status });
const sse = (r: Res) => expect(r.headers.get("content-type")).toMatch(/^text\/event-stream/);
const effects = (table: "refunds" | "outbox", name: string, n: number) => (_: Res, c: Ctx) => {
  for (const call of c.fx[name]!.calls.filter((id) => (table === "refunds" ? id.startsWith("rf") : id.startsWith("em")))) {
    expect(s.db.rows(table, "call_id = ?", call), `${table} for ${call}`).toHaveLength(n);
  }
};
const interruptIs = (name: string, status: string) => (_: Res, c: Ctx) =>
  expect(s.db.rows("interrupts", "interrupt_id = ?", c.fx[name]!.interrupt)).toMatchObject([{ status }]);
const all =
  (...checks: Array<(r: Res, c: Ctx) => void | Promise<void>>) =>
  async (r: Res, c: Ctx) => {
    for (const check of checks) await check(r, c);
  };

// ---------------------------------------------------------------------------------------------
// The matrix

/** Every endpoint but /healthz, as an unauthenticated caller would try it. */
const EVERY_ENDPOINT: Array<Pick<Row, "method" | "path" | "body" | "check">> = [
  { method: "POST", path: "/threads", body: newThread("free"), check: notCreated },
  { method: "POST", path: "/threads", body: "{not json" }, // 401 before 400
  { method: "GET", path: "/threads" },
  { method: "GET", path: "/threads/{idle}" },
  { method: "GET", path: "/threads/{free}" }, // 401 before 404
  { method: "GET", path: "/threads/{refund}/stream" },
  { method: "GET", path: "/threads/{refund}/audit" },
  { method: "POST", path: "/threads/{free}/runs", body: MSG, check: notCreated },
  { method: "POST", path: "/threads/{idle}/runs", body: MSG },
  { method: "POST", path: "/threads/{refund}/resume", body: decide("refund") },
  { method: "POST", path: "/threads/{email}/resume", body: decide("email") },
  { method: "POST", path: "/threads/{refund}/cancel" },
  { method: "GET", path: "/approvals" },
  { method: "GET", path: "/me" },
];

group("authn: no or unknown token → 401 everywhere but /healthz", ["idle", "refund", "email"], [
  { who: "anonymous", method: "GET", path: "/healthz", expect: 200 },
  { who: "bad", method: "GET", path: "/healthz", expect: 200 },
  ...(["anonymous", "bad", "basic"] as const).flatMap((who) =>
    EVERY_ENDPOINT.map((e): Row => ({ who, ...e, expect: 401, code: "unauthorized" })),
  ),
]);

group("ownership: bob and alice's threads", ["idle", "refund", "email"], [
  { who: "owner", method: "GET", path: "/threads/{idle}", expect: 200, check: viewOf("idle", "idle") },
  { who: "other", method: "GET", path: "/threads/{idle}", expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{refund}", expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{email}", expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{idle}/stream", expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{refund}/stream", expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{idle}/audit", expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{refund}/audit", expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads/{refund}/resume", body: decide("refund"), expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", false), expect: 404, code: "thread_not_found" },
  // bob is no approver and not the owner: the owner-policy email is not his to decide, nor to see
  { who: "other", method: "POST", path: "/threads/{email}/resume", body: decide("email"), expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { interrupt: "stale" }), expect: 404, code: "thread_not_found" }, // 404 before 409
  { who: "other", method: "POST", path: "/threads/{idle}/resume", body: IDLE_RESUME, expect: 404, code: "thread_not_found" }, // 404 before not_waiting
  { who: "other", method: "POST", path: "/threads/{refund}/resume", body: "{not json", expect: 400, code: "invalid_request" }, // 400 before 404
  { who: "other", method: "GET", path: "/threads/bad%20id", expect: 400, code: "invalid_request" },
  { who: "other", method: "POST", path: "/threads/{idle}/cancel", expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads/{refund}/cancel", expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads/{idle}/runs", body: MSG, expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads/{email}/runs", body: MSG, expect: 404, code: "thread_not_found" }, // not awaiting_approval
  { who: "other", method: "POST", path: "/threads", body: newThread("idle"), expect: 404, code: "thread_not_found" }, // not thread_exists
  { who: "other", method: "POST", path: "/threads", body: newThread("refund"), expect: 404, code: "thread_not_found" },
  { who: "other", method: "POST", path: "/threads", body: newThread("free"), expect: 201, check: createdBy("bob") },
  { who: "other", method: "POST", path: "/threads/{free}/runs", body: MSG, expect: 200, check: all((r) => sse(r), createdBy("bob")) },
  { who: "other", method: "GET", path: "/threads/{free}", expect: 404, code: "thread_not_found" },
  {
    who: "other", method: "GET", path: "/threads?limit=200", expect: 200,
    check: (r, c) => {
      expect(owned("bob").length).toBeGreaterThanOrEqual(2);
      expect(new Set(listed(r))).toEqual(new Set(owned("bob")));
      for (const f of Object.values(c.fx)) expect(listed(r)).not.toContain(f.id);
    },
  },
  {
    who: "owner", method: "GET", path: "/threads?limit=200", expect: 200,
    check: (r, c) => {
      expect(new Set(listed(r))).toEqual(new Set(owned("alice")));
      for (const f of Object.values(c.fx)) expect(listed(r)).toContain(f.id);
    },
  },
  { who: "owner", method: "POST", path: "/threads", body: newThread("idle"), expect: 409, code: "thread_exists" },
  { who: "owner", method: "POST", path: "/threads/{refund}/runs", body: MSG, expect: 409, code: "awaiting_approval" },
  { who: "owner", method: "POST", path: "/threads/{idle}/resume", body: IDLE_RESUME, expect: 409, code: "not_waiting" },
  { who: "owner", method: "GET", path: "/threads/{idle}/audit", expect: 200, check: (r, c) => expect(r.json).toEqual({ thread_id: c.fx.idle!.id, entries: [] }) },
  { who: "owner", method: "GET", path: "/threads/{idle}/stream", expect: 200, check: sse },
]);

group("four eyes: a refund (policy approver)", ["idle", "refund", "email"], [
  { who: "owner", method: "POST", path: "/threads/{refund}/resume", body: decide("refund"), expect: 403, code: "forbidden", check: effects("refunds", "refund", 0) },
  { who: "owner", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", false), expect: 403, code: "forbidden" },
  { who: "owner", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { interrupt: "stale" }), expect: 403, code: "forbidden" }, // 403 before 409
  { who: "owner", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { calls: ["nope"] }), expect: 403, code: "forbidden" }, // 403 before 422
  { who: "owner", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { edit: { amount_cents: -5 } }), expect: 403, code: "forbidden" }, // 403 before the edit's 400
  { who: "owner", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { edit: { amount_cents: 1 } }), expect: 403, code: "forbidden" },
  { who: "other", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { edit: { amount_cents: -5 } }), expect: 404, code: "thread_not_found" },
  { who: "owner", method: "GET", path: "/approvals", expect: 200, check: (r, c) => expect(approvalIds(r)).not.toContain(c.fx.refund!.interrupt) },
  { who: "approver", method: "GET", path: "/threads/{refund}", expect: 200, check: viewOf("refund", "waiting_human") },
  { who: "approver", method: "GET", path: "/threads/{refund}/stream", expect: 200, check: sse },
  { who: "approver", method: "GET", path: "/threads/{refund}/audit", expect: 200 },
  { who: "approver", method: "GET", path: "/threads/{email}", expect: 200, check: viewOf("email", "waiting_human") },
  { who: "approver", method: "GET", path: "/threads/{idle}", expect: 404, code: "thread_not_found" },
  { who: "approver", method: "GET", path: "/threads/{idle}/stream", expect: 404, code: "thread_not_found" },
  { who: "approver", method: "GET", path: "/threads/{idle}/audit", expect: 404, code: "thread_not_found" },
  { who: "approver", method: "POST", path: "/threads/{idle}/cancel", expect: 404, code: "thread_not_found" },
  { who: "approver", method: "POST", path: "/threads/{refund}/cancel", expect: 403, code: "forbidden" },
  { who: "approver", method: "POST", path: "/threads/{email}/cancel", expect: 403, code: "forbidden" },
  { who: "approver", method: "POST", path: "/threads/{refund}/runs", body: MSG, expect: 404, code: "thread_not_found" },
  { who: "approver", method: "POST", path: "/threads/{idle}/runs", body: MSG, expect: 404, code: "thread_not_found" }, // 404 before 403
  { who: "approver", method: "POST", path: "/threads/{free}/runs", body: MSG, expect: 403, code: "forbidden", check: notCreated },
  { who: "approver", method: "POST", path: "/threads", body: newThread("free"), expect: 403, code: "forbidden", check: notCreated },
  { who: "approver", method: "POST", path: "/threads", expect: 403, code: "forbidden" },
  { who: "approver", method: "POST", path: "/threads", body: newThread("refund"), expect: 404, code: "thread_not_found" },
  { who: "approver", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { interrupt: "stale" }), expect: 409, code: "stale_interrupt" },
  { who: "approver", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { calls: ["nope"] }), expect: 422, code: "unknown_call" },
  { who: "approver", method: "POST", path: "/threads/{refund}/resume", body: decide("refund", true, { edit: { amount_cents: -5 } }), expect: 400, code: "invalid_request" },
  {
    who: "approver", method: "POST", path: "/threads/{refund}/resume", body: decide("refund"), expect: 202,
    check: all(effects("refunds", "refund", 1), interruptIs("refund", "resumed"), (_, c) => {
      expect(s.db.rows("audit", "thread_id = ?", c.fx.refund!.id)).toMatchObject([{ by_sub: "ops", decision: "approved" }]);
      expect(threadRow(c.fx.refund!.id)).toMatchObject({ owner: "alice", status: "idle" });
    }),
  },
  { who: "approver", method: "POST", path: "/threads/{refund}/resume", body: decide("refund"), expect: 409, code: "not_waiting", check: effects("refunds", "refund", 1) },
  // It decided: it keeps read access to the now idle thread, and still may not cancel or write.
  { who: "approver", method: "GET", path: "/threads/{refund}", expect: 200, check: viewOf("refund", "idle") },
  { who: "approver", method: "GET", path: "/threads/{refund}/audit", expect: 200, check: (r) => expect(r.json.entries).toMatchObject([{ by: "ops", decision: "approved" }]) },
  { who: "approver", method: "GET", path: "/threads/{refund}/stream", expect: 200, check: sse },
  { who: "approver", method: "POST", path: "/threads/{refund}/cancel", expect: 403, code: "forbidden" },
  { who: "approver", method: "POST", path: "/threads/{refund}/runs", body: MSG, expect: 404, code: "thread_not_found" },
  { who: "other", method: "GET", path: "/threads/{refund}", expect: 404, code: "thread_not_found" },
  { who: "owner", method: "GET", path: "/threads/{refund}/audit", expect: 200, check: (r) => expect(r.json.entries).toHaveLength(1) },
]);

group("owner policy: an email; mixed interrupts are decided as a whole", ["email", "email2", "mixed"], [
  {
    who: "owner", method: "POST", path: "/threads/{email}/resume", body: decide("email"), expect: 202,
    check: all(effects("outbox", "email", 1), interruptIs("email", "resumed"), (_, c) => {
      expect(s.db.rows("outbox", "call_id = ?", c.fx.email!.calls[0])).toMatchObject([{ to: "ada@example.com", subject: "s", body: "b" }]);
    }),
  },
  // The approver never decided it and it waits on nothing: out of sight again.
  { who: "approver", method: "GET", path: "/threads/{email}", expect: 404, code: "thread_not_found" },
  { who: "approver", method: "POST", path: "/threads/{email2}/resume", body: decide("email2"), expect: 202, check: effects("outbox", "email2", 1) },
  { who: "approver", method: "GET", path: "/threads/{email2}", expect: 200, check: viewOf("email2", "idle") },
  { who: "owner", method: "GET", path: "/approvals", expect: 200, check: (r, c) => expect(approvalIds(r)).not.toContain(c.fx.mixed!.interrupt) },
  // One call of the two is hers to decide; the interrupt is decided whole, so neither is.
  { who: "owner", method: "POST", path: "/threads/{mixed}/resume", body: decide("mixed", true), expect: 403, code: "forbidden" },
  { who: "owner", method: "POST", path: "/threads/{mixed}/resume", body: decide("mixed", true, { only: "em" }), expect: 403, code: "forbidden", check: all(effects("outbox", "mixed", 0), effects("refunds", "mixed", 0)) },
  { who: "approver", method: "POST", path: "/threads/{mixed}/resume", body: decide("mixed"), expect: 202, check: all(effects("outbox", "mixed", 1), effects("refunds", "mixed", 1)) },
]);

group("admin: sees and cancels everything; four eyes binds it too", ["idle", "refund", "refund2", "refund3", "rootRefund"], [
  { who: "admin", method: "GET", path: "/threads/{idle}", expect: 200, check: viewOf("idle", "idle") },
  { who: "admin", method: "GET", path: "/threads/{idle}/audit", expect: 200 },
  { who: "admin", method: "GET", path: "/threads/{refund}/stream", expect: 200, check: sse },
  {
    who: "admin", method: "GET", path: "/threads?limit=200", expect: 200,
    check: (r) => {
      const everyone = s.db.rows<{ thread_id: string }>("threads").map((t) => t.thread_id);
      expect(everyone.length).toBeLessThan(200);
      expect(new Set(listed(r))).toEqual(new Set(everyone));
    },
  },
  { who: "admin", method: "POST", path: "/threads/{idle}/runs", body: MSG, expect: 200, check: (_, c) => expect(threadRow(c.fx.idle!.id)).toMatchObject({ owner: "alice", status: "idle" }) },
  { who: "admin", method: "POST", path: "/threads", body: newThread("idle"), expect: 409, code: "thread_exists" },
  { who: "admin", method: "POST", path: "/threads", body: newThread("free"), expect: 201, check: createdBy("root") },
  { who: "admin", method: "POST", path: "/threads/{refund2}/resume", body: decide("refund2", true, { edit: { amount_cents: 42 } }), expect: 202,
    check: all(effects("refunds", "refund2", 1), interruptIs("refund2", "resumed"), (_, c) => expect(s.db.rows("refunds", "call_id = ?", c.fx.refund2!.calls[0])).toMatchObject([{ amount_cents: 42 }])),
  },
  { who: "admin", method: "POST", path: "/threads/{rootRefund}/resume", body: decide("rootRefund"), expect: 403, code: "forbidden", check: effects("refunds", "rootRefund", 0) },
  { who: "owner", method: "GET", path: "/threads/{rootRefund}", expect: 404, code: "thread_not_found" },
  { who: "approver", method: "GET", path: "/threads/{rootRefund}", expect: 200 },
  {
    who: "admin", method: "POST", path: "/threads/{refund}/cancel", expect: 200,
    check: all((r, c) => expect(r.json).toEqual({ thread_id: c.fx.refund!.id, cancelled: true, status: "idle" }), interruptIs("refund", "cancelled"), effects("refunds", "refund", 0)),
  },
  { who: "admin", method: "POST", path: "/threads/{idle}/cancel", expect: 200, check: (r, c) => expect(r.json).toEqual({ thread_id: c.fx.idle!.id, cancelled: false, status: "idle" }) },
  // The owner may always cancel, even an interrupt she may not decide.
  {
    who: "owner", method: "POST", path: "/threads/{refund3}/cancel", expect: 200,
    check: all((r, c) => expect(r.json).toEqual({ thread_id: c.fx.refund3!.id, cancelled: true, status: "idle" }), interruptIs("refund3", "cancelled")),
  },
  { who: "admin", method: "POST", path: "/threads/{rootRefund}/cancel", expect: 200, check: interruptIs("rootRefund", "cancelled") },
]);

group("four eyes binds an approver on its own thread", ["refund", "leadRefund"], [
  { who: "lead", method: "POST", path: "/threads/{leadRefund}/resume", body: decide("leadRefund"), expect: 403, code: "forbidden", check: effects("refunds", "leadRefund", 0) },
  {
    who: "lead", method: "GET", path: "/approvals", expect: 200,
    check: (r, c) => {
      expect(approvalIds(r)).toContain(c.fx.refund!.interrupt);
      expect(approvalIds(r)).not.toContain(c.fx.leadRefund!.interrupt);
    },
  },
  { who: "lead", method: "POST", path: "/threads/{refund}/resume", body: decide("refund"), expect: 202, check: effects("refunds", "refund", 1) },
  { who: "approver", method: "POST", path: "/threads/{leadRefund}/resume", body: decide("leadRefund"), expect: 202, check: effects("refunds", "leadRefund", 1) },
]);

group("inbox and identity: GET /approvals, GET /me", ["refund", "email", "rootRefund"], [
  {
    who: "approver", method: "GET", path: "/approvals", expect: 200,
    check: (r, c) => {
      const mine = (r.json.items as any[]).filter((i) => [c.fx.refund!.id, c.fx.email!.id, c.fx.rootRefund!.id].includes(i.thread_id));
      expect(mine).toHaveLength(3);
      expect(mine).toEqual(expect.arrayContaining([
        expect.objectContaining({ thread_id: c.fx.refund!.id, interrupt_id: c.fx.refund!.interrupt, requested_by: "alice", expires_at: expect.any(String), calls: [expect.objectContaining({ call_id: c.fx.refund!.calls[0], name: "refund_order" })] }),
        expect.objectContaining({ thread_id: c.fx.email!.id, interrupt_id: c.fx.email!.interrupt, requested_by: "alice", calls: [expect.objectContaining({ call_id: c.fx.email!.calls[0], name: "send_email" })] }),
        expect.objectContaining({ thread_id: c.fx.rootRefund!.id, requested_by: "root" }),
      ]));
    },
  },
  { who: "other", method: "GET", path: "/approvals", expect: 200, check: (r) => expect(r.json).toEqual({ items: [] }) },
  {
    who: "owner", method: "GET", path: "/approvals", expect: 200,
    check: (r, c) => {
      expect(approvalIds(r)).toContain(c.fx.email!.interrupt);
      expect(approvalIds(r)).not.toContain(c.fx.refund!.interrupt);
      expect(approvalIds(r)).not.toContain(c.fx.rootRefund!.interrupt);
      for (const item of r.json.items) {
        expect(item.requested_by).toBe("alice");
        expect(item.calls.map((x: { name: string }) => x.name)).toEqual(["send_email"]);
      }
    },
  },
  {
    who: "admin", method: "GET", path: "/approvals", expect: 200,
    check: (r, c) => {
      expect(approvalIds(r)).toEqual(expect.arrayContaining([c.fx.refund!.interrupt, c.fx.email!.interrupt]));
      expect(approvalIds(r)).not.toContain(c.fx.rootRefund!.interrupt); // four eyes
    },
  },
  ...(["owner", "other", "approver", "admin", "lead"] as const).map((who): Row => ({
    who, method: "GET", path: "/me", expect: 200, check: (r) => expect(r.json).toEqual({ sub: SUB[who], roles: [...ROLES[who]] }),
  })),
]);
