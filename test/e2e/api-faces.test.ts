/**
 * The gate's guarantees, written once and run through every API: tollgate's own, LangGraph's
 * run-centric one at /langgraph (LangGraph's SDK, decisions by position) and its thread-centric
 * one (the SDK's `ThreadStream` over SSE and WebSocket, decisions by `input.respond`). Whatever shape a client speaks, an
 * approved call runs once, a rejected one never, only someone allowed may decide, a cancel stops
 * the model, secrets stay masked, one run at a time, and a late approval is refused.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient, FACES, type FaceName } from "../helpers/api-face.js";
import { REPO_ROOT, type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb, type TestDb } from "../helpers/sqlite.js";
import { within } from "../helpers/within.js";
import { storedTextByTable } from "../helpers/stored-text.js";
import { call, expectNoStackTraces, type Stack, startStack, threadId, toolMessagesSeen } from "./support.js";

const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-bob-000001": { sub: "bob", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
  "tok-carol-0001": { sub: "carol", roles: ["user"] },
  "tok-dave-00001": { sub: "dave", roles: ["user"] },
};
const AUTH = { AUTH_TOKENS: JSON.stringify(TOKENS) };

let s: Stack;
/** A server whose approvals expire after a second, for the late approval. */
let short: ServerProcess;
let shortDb: TestDb;
/** A server that allows each principal two runs a minute. */
let limited: ServerProcess;
/** A server whose one graph holds a tool made by a second copy of tollgate's code. */
let copied: ServerProcess;
beforeAll(async () => {
  s = await startStack(AUTH);
  short = await startServer({ MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url, TOLLGATE_TEST_TOOLS: "1", ...AUTH, APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
  shortDb = openDb(short.dataDir);
  limited = await startServer({ MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url, TOLLGATE_TEST_TOOLS: "1", ...AUTH, RATE_LIMIT_RUNS_PER_MINUTE: "2" });
  copied = await startServer({ TOLLGATE_GRAPHS: path.join(REPO_ROOT, "test/fixtures/second-copy/langgraph.json"), ...AUTH });
});
afterAll(async () => {
  for (const server of [s?.server, short, limited, copied].filter(Boolean)) expectNoStackTraces(server!);
  shortDb?.close();
  await Promise.all([short?.kill(), limited?.kill(), copied?.kill()]);
  await s?.stop();
});

const refunds = (db: TestDb, callId: string) => db.rows<{ amount_cents: number }>("refunds", "call_id = ?", callId);
const REFUND = { order_id: "A-1001", amount_cents: 500, reason: "late" };

/** A sensitive value that no random id can hold by chance, one per test and face (the server and its log are shared). */
const ibanFor = (label: string) => `GB29NWBK${label.toUpperCase().replace(/[^A-Z]/g, "")}60161331926819`;

/** What tollgate's own rows hold (checkpoints and the ledger may keep real values; these may not). */
function ownRowsText(db: TestDb): string {
  const own = /(^|\.)(run_event_batches|interrupts|audit|webhook_outbox|threads|runs)$/;
  return [...storedTextByTable(db)].filter(([table]) => own.test(table)).map(([, text]) => text).join("\n");
}

/** Every row of every table, LangGraph's checkpoints and writes included. */
const allRowsText = (db: TestDb) => [...storedTextByTable(db).values()].join("\n");

/** The model request at `index`, once it has come (the fake records them in order). */
async function requestAt(index: number) {
  while (s.model.requests.length <= index) await new Promise((r) => setTimeout(r, 10));
  return s.model.requests[index]!;
}

describe.each(FACES)("through %s's API", (face: FaceName) => {
  let alice: ApiClient;
  let bob: ApiClient;
  let ops: ApiClient;
  beforeAll(() => {
    [alice, bob, ops] = ["tok-alice-0001", "tok-bob-000001", "tok-ops-000001"].map((t) => apiClient(face, s.server.url, t)) as [ApiClient, ApiClient, ApiClient];
  });

  /** alice asks for a refund; the run stops at the gate. */
  async function asked(label: string, callId: string, args: Record<string, unknown> = REFUND) {
    const id = threadId(`${face}-${label}`);
    s.model.push({ toolCalls: [{ id: callId, name: "refund_order", args }] });
    const { ending } = await alice.send(id, "refund my order");
    expect(ending).toMatchObject({ kind: "interrupt", calls: [{ callId, name: "refund_order" }] });
    return { id, intr: (ending as { interruptId: string }).interruptId };
  }

  it("an approved call runs once, and the model gets its result", async () => {
    const { id, intr } = await asked("approve", `${face}-a1`);
    expect(refunds(s.db, `${face}-a1`)).toHaveLength(0);
    s.model.push({ text: "Refunded." });
    const { ending } = await ops.decide(id, intr, [{ callId: `${face}-a1`, approved: true }]);
    expect(ending).toEqual({ kind: "done", text: "Refunded." });
    expect(refunds(s.db, `${face}-a1`)).toHaveLength(1);
    expect(toolMessagesSeen(s.model.requests.at(-1)!.body).get(`${face}-a1`)).toContain('"order_id":"A-1001"');
  });

  it("a rejected call never runs, and the model is told why", async () => {
    const { id, intr } = await asked("reject", `${face}-a2`);
    s.model.push({ text: "Not refunded." });
    await ops.decide(id, intr, [{ callId: `${face}-a2`, approved: false, reason: "over the limit" }]);
    expect(refunds(s.db, `${face}-a2`)).toHaveLength(0);
    expect(toolMessagesSeen(s.model.requests.at(-1)!.body).get(`${face}-a2`)).toBe("Rejected: over the limit");
  });

  it("an edited call runs with the edited arguments", async () => {
    const { id, intr } = await asked("edit", `${face}-a3`, { ...REFUND, amount_cents: 900 });
    s.model.push({ text: "Refunded less." });
    await ops.decide(id, intr, [{ callId: `${face}-a3`, approved: true, editedArgs: { amount_cents: 300 } }]);
    expect(refunds(s.db, `${face}-a3`)).toMatchObject([{ amount_cents: 300 }]);
  });

  it("20 racing approvals: one resumed run, one refund, the others refused with 409", async () => {
    const { id, intr } = await asked("race", `${face}-a4`);
    s.model.push({ text: "Refunded once." });
    const racers = Array.from({ length: 20 }, () => apiClient(face, s.server.url, "tok-ops-000001"));
    const outcomes = await Promise.allSettled(racers.map((r) => r.decide(id, intr, [{ callId: `${face}-a4`, approved: true }])));
    const won = outcomes.filter((o) => o.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === "rejected").map((o) => ((o as PromiseRejectedResult).reason as { status?: number }).status)).toEqual(Array(19).fill(409));
    expect(refunds(s.db, `${face}-a4`)).toHaveLength(1);
  });

  it("four eyes: the one who asked cannot approve (403), and the call stays open", async () => {
    const { id, intr } = await asked("4eyes", `${face}-a5`);
    await expect(alice.decide(id, intr, [{ callId: `${face}-a5`, approved: true }])).rejects.toMatchObject({ status: 403 });
    expect(refunds(s.db, `${face}-a5`)).toHaveLength(0);
    s.model.push({ text: "Refunded after review." });
    await ops.decide(id, intr, [{ callId: `${face}-a5`, approved: true }]);
    expect(refunds(s.db, `${face}-a5`)).toHaveLength(1);
  });

  it("another user's thread is a 404 to read and to decide", async () => {
    const { id, intr } = await asked("owner", `${face}-a6`);
    await expect(bob.read(id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.decide(id, intr, [{ callId: `${face}-a6`, approved: true }])).rejects.toMatchObject({ status: 404 });
    expect(refunds(s.db, `${face}-a6`)).toHaveLength(0);
  });

  it("sensitive arguments never appear in a stream or a read", async () => {
    const id = threadId(`${face}-mask`);
    s.model.push({ toolCalls: [{ id: `${face}-m1`, name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "the vault code is plum-sparrow" } }] });
    const { ending, wire } = await alice.send(id, "mail eve");
    expect(ending).toMatchObject({ kind: "interrupt", calls: [{ args: { to: "***", body: "***", subject: "Hi" } }] });
    const read = await alice.read(id);
    for (const text of [wire, read]) {
      expect(text).not.toContain("eve@example.com");
      expect(text).not.toContain("plum-sparrow"); // not digits: a random id could hold them
    }
    await alice.cancel(id);
  });

  it("a tool's and a preview's error show the call's sensitive arguments masked, wherever shown or stored", async () => {
    const id = threadId(`${face}-errmask`);
    const IBAN = ibanFor(`${face} errmask`);
    const [read, wire] = [`${face}-e1`, `${face}-e2`];
    const args = { iban: IBAN, amount_cents: 100 };
    s.model.push({ toolCalls: [{ id: read, name: "check_iban", args }, { id: wire, name: "wire_transfer", args }] });
    const asked = await alice.send(id, "pay my rent");
    expect(asked.ending).toMatchObject({ kind: "interrupt", calls: [{ callId: wire, name: "wire_transfer" }] });
    // The preview failed quoting the IBAN: the inbox shows its error masked, and so does the
    // interrupt event (LangGraph's HITL value carries a preview, not a preview's error).
    if (face === "tollgate") expect(asked.wire).toContain("cannot preview the account ***");
    const inbox = await call(s.server.url, "GET", "/approvals", undefined, { authorization: "Bearer tok-ops-000001" });
    expect(inbox.text).toContain("cannot preview the account ***");
    s.model.push({ text: "The bank refused." });
    const { ending, wire: resumed } = await ops.decide(id, (asked.ending as { interruptId: string }).interruptId, [{ callId: wire, approved: true }]);
    expect(ending).toEqual({ kind: "done", text: "The bank refused." });
    // The read tool's error and the approved tool's, as the stream, the thread and the model show them.
    const thread = await alice.read(id);
    for (const text of [asked.wire + resumed, thread]) {
      expect(text).toContain("no bank knows ***");
      expect(text).toContain("bank refused transfer to ***");
    }
    const seen = toolMessagesSeen(s.model.requests.at(-1)!.body);
    expect([seen.get(read), seen.get(wire)]).toEqual(["Error: no bank knows ***", "Error: bank refused transfer to ***"]);
    for (const [where, text] of Object.entries({ stream: asked.wire + resumed, thread, inbox: inbox.text, "tollgate's rows": ownRowsText(s.db), log: s.server.stderr() + s.server.stdout() })) {
      expect(text, where).not.toContain(IBAN);
    }
    // Checkpoints keep the call's real arguments, but no error text quoting them.
    const stored = allRowsText(s.db);
    for (const quoted of ["no bank knows ", "bank refused transfer to ", "cannot preview the account "]) expect(stored).not.toContain(quoted + IBAN);
  });

  it("a tool the server does not know fails closed, its call shown with every argument masked", async () => {
    const id = threadId(`${face}-unknown`);
    const IBAN = ibanFor(`${face} unknown`);
    const unknown = `${face}-u1`;
    s.model.push({ toolCalls: [{ id: unknown, name: "wire_transfer_v2", args: { iban: IBAN, amount_cents: 100 } }] }, { text: "No such tool." });
    const { ending, wire } = await alice.send(id, "pay my rent");
    expect(ending).toEqual({ kind: "done", text: "No such tool." });
    expect(toolMessagesSeen(s.model.requests.at(-1)!.body).get(unknown)).toContain("Tool 'wire_transfer_v2' not found");
    const thread = await alice.read(id);
    for (const [where, text] of Object.entries({ stream: wire, thread })) {
      expect(text.replaceAll("\\", ""), where).toContain('"iban":"***","amount_cents":"***"');
      expect(text, where).not.toContain(IBAN);
    }
    expect(ownRowsText(s.db), "tollgate's rows").not.toContain(IBAN);
    expect(s.server.stderr() + s.server.stdout(), "the log").not.toContain(IBAN);
  });

  it("a tool made by a second copy of tollgate is found: its call waits, masked as it says, and runs once approved", async () => {
    const [asker, approver] = ["tok-alice-0001", "tok-ops-000001"].map((t) => apiClient(face, copied.url, t)) as [ApiClient, ApiClient];
    const id = threadId(`${face}-copy`);
    const cents = { tollgate: 501, langgraph: 502, "thread-stream": 503, "thread-socket": 504 }[face];
    const { ending } = await asker.send(id, `wire ${cents} to eve`);
    expect(ending).toMatchObject({ kind: "interrupt", calls: [{ name: "wire_money", args: { to: "***", cents } }] });
    const { interruptId, calls } = ending as { interruptId: string; calls: Array<{ callId: string }> };
    const done = await approver.decide(id, interruptId, [{ callId: calls[0]!.callId, approved: true }]);
    expect(done.ending).toEqual({ kind: "done", text: `sent ${cents} to eve` });
    const file = path.join(copied.dataDir, "wired-copy.jsonl");
    const wired = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { cents: number });
    expect(wired.filter((w) => w.cents === cents)).toHaveLength(1);
  });

  it("one run at a time: a second message while one streams is 409; a cancel aborts the model's request", async () => {
    const id = threadId(`${face}-flight`);
    s.model.push({ hang: true, text: "Thinking" });
    const before = s.model.requests.length;
    const first = alice.send(id, "slow one");
    const request = await within(requestAt(before), { ms: 10_000, failure: "the model was not called" });
    await expect(alice.send(id, "and another")).rejects.toMatchObject({ status: 409 });
    await alice.cancel(id);
    await within(request.closed, { ms: 5_000, failure: "the model's HTTP request was not aborted", since: "the cancel" });
    expect((await within(first, { ms: 5_000, failure: "the cancelled stream did not end" })).ending).toEqual({ kind: "cancelled" });
  });

  it("an approval after the window closed is 410, and the call never runs", async () => {
    const asker = apiClient(face, short.url, "tok-alice-0001");
    const id = threadId(`${face}-late`);
    s.model.push({ toolCalls: [{ id: `${face}-a7`, name: "refund_order", args: REFUND }] });
    const { ending } = await asker.send(id, "refund it");
    expect(ending).toMatchObject({ kind: "interrupt" });
    const waiting = (text: string) => text.includes('"status":"waiting_human"') || text.includes('"status":"interrupted"');
    await within(
      (async () => {
        while (waiting(await asker.read(id))) await new Promise((r) => setTimeout(r, 50));
      })(),
      { ms: 10_000, failure: "the interrupt was not closed as expired" },
    );
    // The owner may see the thread still; time, not four eyes, refuses the approval now.
    const intr = (ending as { interruptId: string }).interruptId;
    await expect(asker.decide(id, intr, [{ callId: `${face}-a7`, approved: true }])).rejects.toMatchObject({ status: 410 });
    expect(refunds(shortDb, `${face}-a7`)).toHaveLength(0);
  });

  it("the same rate limit per principal: a third run in the minute is 429", async () => {
    // A principal per face: the limit counts each one's runs on the shared server.
    const who = apiClient(face, limited.url, { tollgate: "tok-alice-0001", langgraph: "tok-bob-000001", "thread-stream": "tok-carol-0001", "thread-socket": "tok-dave-00001" }[face]);
    for (const n of [1, 2]) {
      s.model.push({ text: `answer ${n}` });
      expect((await who.send(threadId(`${face}-limit`), `message ${n}`)).ending).toEqual({ kind: "done", text: `answer ${n}` });
    }
    await expect(who.send(threadId(`${face}-limit`), "one too many")).rejects.toMatchObject({ status: 429 });
  });
});
