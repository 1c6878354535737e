/**
 * A quorum at the gate, on a real server (and, in the postgres project, on PostgreSQL): the demo's
 * refund above $500 needs two approvers of role `finance` (AUTH_ROLES=finance). Decisions are
 * taken call by call: the first approval answers 202 waiting_human and starts nothing; the second
 * runs the refund once. Four eyes holds across the quorum, one principal counts once, 20 racing
 * approvers count exactly two, a reject closes the call, expiry and kill -9 lose nothing, and a
 * positional decision through LangGraph's API counts as the caller's own.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { within } from "../helpers/within.js";
import { call, expectNoStackTraces, type Stack, startStack, terminal, threadId, whenIdle } from "./support.js";

const FINANCE = Array.from({ length: 20 }, (_, i) => [`tok-fin-${String(i).padStart(6, "0")}`, { sub: `fin${i}`, roles: ["finance"] }] as const);
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
  "tok-bossy-0001": { sub: "bossy", roles: ["user", "finance"] },
  "tok-both-0001": { sub: "both", roles: ["approver", "finance"] },
  ...Object.fromEntries(FINANCE),
};
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const FIN = (i: number) => as(FINANCE[i]![0]);
const ENV = { AUTH_TOKENS: JSON.stringify(TOKENS), AUTH_ROLES: "finance" };
/** Above $500: two of finance. */
const LARGE = { order_id: "A-1003", amount_cents: 60_000, reason: "damaged" };

let s: Stack;
beforeAll(async () => {
  s = await startStack(ENV);
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
});

async function asked(stack: Stack, id: string, calls: Array<{ id: string; name: string; args: object }>, client = stack.client) {
  stack.model.push({ toolCalls: calls });
  return terminal(await client.run(id, "refund please").collect(), "interrupt");
}
const decide = (url: string, id: string, who: Record<string, string>, body: object, accept?: string) =>
  call(url, "POST", `/threads/${id}/resume`, body, { ...who, ...(accept ? { accept } : {}) });
const approve = (interruptId: string, ...callIds: string[]) => ({ interrupt_id: interruptId, decisions: callIds.map((c) => ({ call_id: c, approved: true })) });

describe("a refund that needs two of finance", () => {
  it("shows the quorum; the first approval waits (202, nothing runs), the second runs the refund once", async () => {
    const id = threadId("q-two");
    const intr = await asked(s, id, [{ id: "q1", name: "refund_order", args: LARGE }]);
    expect(intr.calls).toMatchObject([{ call_id: "q1", policy: "quorum", requires: { role: "finance", approvers: 2 }, approvals: [], editable: true }]);
    // The inbox: finance sees it; an approver without the role does not.
    const inbox = async (who: Record<string, string>) => ((await call(s.server.url, "GET", "/approvals", undefined, who)).json as { items: Array<{ thread_id: string }> }).items.map((i) => i.thread_id);
    expect(await inbox(FIN(0))).toContain(id);
    expect(await inbox(as("tok-ops-000001"))).not.toContain(id);

    const first = await decide(s.server.url, id, FIN(0), approve(intr.interrupt_id, "q1"), "text/event-stream");
    expect([first.status, first.json]).toEqual([202, { status: "waiting_human", waiting_on: ["q1"], run_id: null }]);
    expect(s.db.rows("refunds", "call_id = ?", "q1")).toEqual([]);
    const view = await new TollgateClient({ baseUrl: s.server.url, token: FINANCE[0]![0] }).getThread(id);
    expect(view).toMatchObject({ status: "waiting_human", pending: { calls: [{ call_id: "q1", approvals: [{ by: "fin0" }] }] } });

    // One principal counts once; the owner, and a principal without the role, never count.
    expect(await decide(s.server.url, id, FIN(0), approve(intr.interrupt_id, "q1"))).toMatchObject({ status: 409, json: { error: { code: "already_decided" } } });
    expect(await decide(s.server.url, id, as("tok-alice-0001"), approve(intr.interrupt_id, "q1"))).toMatchObject({ status: 403 });
    expect(await decide(s.server.url, id, as("tok-ops-000001"), approve(intr.interrupt_id, "q1"))).toMatchObject({ status: 404 });

    s.model.push({ text: "Refunded." });
    const second = await decide(s.server.url, id, FIN(1), approve(intr.interrupt_id, "q1"), "text/event-stream");
    expect(second.status).toBe(200);
    expect(second.text).toContain('"outcome":"completed"');
    expect(s.db.rows("refunds", "call_id = ?", "q1")).toHaveLength(1);
    const audit = (await call(s.server.url, "GET", `/threads/${id}/audit`, undefined, as("tok-alice-0001"))).json as { entries: Array<Record<string, unknown>> };
    expect(audit.entries).toMatchObject([
      { call_id: "q1", decision: "approved", by: "fin0" },
      { call_id: "q1", decision: "approved", by: "fin1", executed: { status: "ok" } },
    ]);
    // Decided: who took part may still read it (409); anyone else of finance no longer sees it (404).
    expect(await decide(s.server.url, id, FIN(0), approve(intr.interrupt_id, "q1"))).toMatchObject({ status: 409, json: { error: { code: "not_waiting" } } });
    expect(await decide(s.server.url, id, FIN(2), approve(intr.interrupt_id, "q1"))).toMatchObject({ status: 404 });
  });

  it("four eyes across the quorum: a finance member who asked for the refund never counts", async () => {
    const bossy = new TollgateClient({ baseUrl: s.server.url, token: "tok-bossy-0001" });
    const id = threadId("q-bossy");
    const intr = await asked(s, id, [{ id: "qb", name: "refund_order", args: LARGE }], bossy);
    expect(await decide(s.server.url, id, as("tok-bossy-0001"), approve(intr.interrupt_id, "qb"))).toMatchObject({ status: 403 });
    expect(s.db.rows("audit", "thread_id = ?", id)).toEqual([]);
  });

  it("20 finance approvers racing: exactly two counted, one run, one refund", async () => {
    const id = threadId("q-race");
    const intr = await asked(s, id, [{ id: "qr", name: "refund_order", args: LARGE }]);
    s.model.push({ text: "Refunded." });
    const results = await Promise.all(FINANCE.map((_, i) => decide(s.server.url, id, FIN(i), approve(intr.interrupt_id, "qr"))));
    const waited = results.filter((r) => r.status === 202 && (r.json as { status?: string }).status === "waiting_human");
    const ran = results.filter((r) => r.status === 202 && typeof (r.json as { run_id?: unknown }).run_id === "string");
    expect([waited.length, ran.length]).toEqual([1, 1]);
    // The others came too late: the call closed, the run started, or (once it has) the thread is
    // no longer theirs to see.
    for (const r of results.filter((x) => !waited.includes(x) && !ran.includes(x))) {
      expect(["already_decided", "not_waiting", "thread_busy", "thread_not_found"]).toContain((r.json as { error: { code: string } }).error.code);
    }
    expect((await whenIdle(s.client, id, "the refund's run did not end")).last_outcome).toBe("completed");
    expect(s.db.rows("audit", "thread_id = ? AND decision = 'approved'", id)).toHaveLength(2);
    expect(s.db.rows("refunds", "call_id = ?", "qr")).toHaveLength(1);
    expect(s.db.rows("ledger", "call_id = ?", "qr")).toHaveLength(1);
  });

  it("a reject after one approval closes the call as rejected; the run goes on without the refund", async () => {
    const id = threadId("q-reject");
    const intr = await asked(s, id, [{ id: "qj", name: "refund_order", args: LARGE }]);
    expect((await decide(s.server.url, id, FIN(3), approve(intr.interrupt_id, "qj"))).status).toBe(202);
    s.model.push({ text: "Not refunded." });
    const rejected = await decide(s.server.url, id, FIN(4), { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qj", approved: false, reason: "over the limit" }] }, "text/event-stream");
    expect(rejected.status).toBe(200);
    expect(rejected.text).toContain("Rejected: over the limit");
    expect(s.db.rows("refunds", "call_id = ?", "qj")).toEqual([]);
  });

  it("a batch with an owner's email and a quorum refund: each is decided by whom it needs, and the run starts once both are", async () => {
    const id = threadId("q-mixed");
    const email = { to: "carol@example.com", subject: "Refund", body: "on its way" };
    const intr = await asked(s, id, [
      { id: "qm-mail", name: "send_email", args: email },
      { id: "qm-refund", name: "refund_order", args: LARGE },
    ]);
    // Alice may decide her email, not the refund: naming both is refused as a whole.
    expect(await decide(s.server.url, id, as("tok-alice-0001"), approve(intr.interrupt_id, "qm-mail", "qm-refund"))).toMatchObject({ status: 403 });
    const mine = await decide(s.server.url, id, as("tok-alice-0001"), approve(intr.interrupt_id, "qm-mail"));
    expect([mine.status, mine.json]).toEqual([202, { status: "waiting_human", waiting_on: ["qm-refund"], run_id: null }]);
    expect((await decide(s.server.url, id, FIN(5), approve(intr.interrupt_id, "qm-refund"))).status).toBe(202);
    s.model.push({ text: "Both done." });
    const last = await decide(s.server.url, id, FIN(6), approve(intr.interrupt_id, "qm-refund"), "text/event-stream");
    expect(last.text).toContain('"outcome":"completed"');
    expect(s.db.rows("outbox", "call_id = ?", "qm-mail")).toHaveLength(1);
    expect(s.db.rows("refunds", "call_id = ?", "qm-refund")).toHaveLength(1);
  });

  it("through LangGraph's API, a positional decision counts as the caller's own; calls left out stay open", async () => {
    const id = threadId("q-lg");
    await asked(s, id, [{ id: "ql", name: "refund_order", args: LARGE }]);
    const body = { assistant_id: "agent", command: { resume: { decisions: [{ type: "approve" }] } } };
    const first = await call(s.server.url, "POST", `/langgraph/threads/${id}/runs/stream`, body, FIN(7));
    expect([first.status, first.json]).toEqual([202, { status: "waiting_human", waiting_on: ["ql"], run_id: null }]);
    // The HITL value's tollgate block says what the call needs and who approved it so far.
    const state = (await call(s.server.url, "GET", `/langgraph/threads/${id}/state`, undefined, FIN(8))).json as { tasks: Array<{ interrupts: Array<{ value: any }> }> };
    expect(state.tasks[0]!.interrupts[0]!.value).toMatchObject({
      review_configs: [{ allowed_decisions: ["approve", "edit", "reject"] }],
      tollgate: {
        calls: [{ call_id: "ql", policy: "quorum", requires: { role: "finance", approvers: 2 }, approvals: [{ by: "fin7" }], editable: true, preview: { order_id: "A-1003" } }],
      },
    });
    s.model.push({ text: "Refunded." });
    const sdk = new Client({ apiUrl: `${s.server.url}/langgraph`, apiKey: FINANCE[8]![0], callerOptions: { maxRetries: 0 } });
    const parts: Array<{ event: string }> = [];
    await within(
      (async () => {
        for await (const p of sdk.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } })) parts.push(p);
      })(),
      { ms: 15_000, failure: "the second approval's run did not stream to its end" },
    );
    expect(parts[0]).toMatchObject({ event: "metadata" });
    expect(s.db.rows("refunds", "call_id = ?", "ql")).toHaveLength(1);
  });
});

describe("editing a call that needs a quorum", () => {
  it("an edit discards the approvals given before it and counts as the editor's; the next approver approves the edited call, which runs as edited", async () => {
    const id = threadId("q-edit");
    const intr = await asked(s, id, [{ id: "qx", name: "refund_order", args: LARGE }]);
    expect((await decide(s.server.url, id, FIN(9), approve(intr.interrupt_id, "qx"))).status).toBe(202);
    const edited = await decide(s.server.url, id, FIN(10), { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qx", approved: true, edited_args: { amount_cents: 70_000 } }] });
    expect([edited.status, edited.json]).toEqual([202, { status: "waiting_human", waiting_on: ["qx"], run_id: null }]);
    const view = await new TollgateClient({ baseUrl: s.server.url, token: "tok-alice-0001" }).getThread(id);
    // Everyone sees the call as edited, and only the editor's approval counts now.
    expect(view.pending?.calls[0]).toMatchObject({ args: { amount_cents: 70_000 }, policy: "quorum", approvals: [{ by: "fin10" }] });
    expect(view.pending?.calls[0]?.version).toBe(2);
    // An approval that names no version is of what fin9 saw before the edit: refused, with the call as it now stands.
    const blind = await decide(s.server.url, id, FIN(9), approve(intr.interrupt_id, "qx"));
    expect(blind.status).toBe(409);
    expect(blind.json).toMatchObject({ error: { code: "call_changed", call: { call_id: "qx", version: 2, args: { amount_cents: 70_000 } } } });
    s.model.push({ text: "Refunded." });
    // fin9's earlier approval went with the edit: fin9 may approve the edited call, naming its version, and that closes it.
    const done = await decide(s.server.url, id, FIN(9), { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qx", approved: true, version: 2 }] }, "text/event-stream");
    expect(done.text).toContain('"edited":true');
    expect(s.db.rows("refunds", "call_id = ?", "qx")).toMatchObject([{ amount_cents: 70_000 }]);
    const audit = (await call(s.server.url, "GET", `/threads/${id}/audit`, undefined, as("tok-alice-0001"))).json as { entries: Array<Record<string, unknown>> };
    expect(audit.entries.map((e) => [e.decision, e.by])).toEqual([
      ["approved", "fin9"],
      ["edited", "fin10"],
      ["approved", "fin9"],
    ]);
    expect(audit.entries[2]).toMatchObject({ executed: { status: "ok" } });
  });

  it("an edit re-resolves the policy: the editor must meet the new one too (403, nothing applied)", async () => {
    const id = threadId("q-edit-down");
    const intr = await asked(s, id, [{ id: "qd", name: "refund_order", args: LARGE }]);
    // Down to $50: an approver's call now, and a finance member without the approver role may not decide it.
    const down = await decide(s.server.url, id, FIN(11), { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qd", approved: true, edited_args: { amount_cents: 5_000 } }] });
    expect(down.status).toBe(403);
    expect(s.db.rows("audit", "thread_id = ?", id)).toEqual([]);
  });
});

describe("edits that would open the gate with fewer approvals", () => {
  it("an edit that takes the quorum off a call keeps the interrupt decided call by call: the original never runs on one approval", async () => {
    const id = threadId("q-off");
    const email = { to: "carol@example.com", subject: "Refund", body: "on its way" };
    const intr = await asked(s, id, [
      { id: "qo-refund", name: "refund_order", args: LARGE },
      { id: "qo-mail", name: "send_email", args: email },
    ]);
    // A finance member who is also an approver edits the refund down to $400: an approver's call, closed by the edit.
    const down = await decide(s.server.url, id, as("tok-both-0001"), { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qo-refund", approved: true, edited_args: { amount_cents: 40_000 } }] });
    expect([down.status, down.json]).toEqual([202, { status: "waiting_human", waiting_on: ["qo-mail"], run_id: null }]);
    // Still call by call: the owner decides her email alone, and the refund runs as edited.
    s.model.push({ text: "Done." });
    const mine = await decide(s.server.url, id, as("tok-alice-0001"), approve(intr.interrupt_id, "qo-mail"), "text/event-stream");
    expect(mine.text).toContain('"outcome":"completed"');
    expect(s.db.rows("refunds", "call_id = ?", "qo-refund")).toMatchObject([{ amount_cents: 40_000 }]);
  });

  it("an edit back to the call as asked is a new version: it counts as the editor's approval of that, not of the edit before", async () => {
    const id = threadId("q-back");
    const intr = await asked(s, id, [{ id: "qb2", name: "refund_order", args: LARGE }]);
    const up = { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qb2", approved: true, edited_args: { amount_cents: 90_000 } }] };
    expect((await decide(s.server.url, id, FIN(12), up)).status).toBe(202);
    const back = { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qb2", approved: true, version: 2, edited_args: { amount_cents: LARGE.amount_cents } }] };
    const reverted = await decide(s.server.url, id, FIN(13), back);
    expect([reverted.status, reverted.json]).toEqual([202, { status: "waiting_human", waiting_on: ["qb2"], run_id: null }]);
    const view = await new TollgateClient({ baseUrl: s.server.url, token: "tok-alice-0001" }).getThread(id);
    expect(view.pending?.calls[0]).toMatchObject({ args: { amount_cents: LARGE.amount_cents }, approvals: [{ by: "fin13" }], version: 3 });
    s.model.push({ text: "Refunded." });
    const third = { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "qb2", approved: true, version: 3 }] };
    expect((await decide(s.server.url, id, FIN(12), third, "text/event-stream")).text).toContain('"outcome":"completed"');
    expect(s.db.rows("refunds", "call_id = ?", "qb2")).toMatchObject([{ amount_cents: LARGE.amount_cents }]);
  });

  it("an empty list of decisions is refused: nothing is written, no webhook, no count", async () => {
    const id = threadId("q-empty");
    const intr = await asked(s, id, [{ id: "qn", name: "refund_order", args: LARGE }]);
    expect(await decide(s.server.url, id, FIN(14), { interrupt_id: intr.interrupt_id, decisions: [] })).toMatchObject({ status: 400 });
    expect(s.db.rows("audit", "thread_id = ?", id)).toEqual([]);
  });
});

describe("a quorum over time", () => {
  it("expiry with one of two approvals: closed as expired, nothing runs", async () => {
    const short = await startStack({ ...ENV, APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
    try {
      const id = threadId("q-expire");
      const intr = await asked(short, id, [{ id: "qe", name: "refund_order", args: LARGE }]);
      expect((await decide(short.server.url, id, FIN(0), approve(intr.interrupt_id, "qe"))).status).toBe(202);
      expect(await whenIdle(short.client, id, "the interrupt was not closed at its deadline")).toMatchObject({ last_outcome: "expired" });
      expect(short.db.rows("refunds", "call_id = ?", "qe")).toEqual([]);
      expect(short.db.rows("audit", "thread_id = ?", id).map((r) => [r.decision, r.by_sub])).toEqual([
        ["approved", "fin0"],
        ["expired", null],
      ]);
    } finally {
      await short.stop();
    }
  });

  it("kill -9 between the first and the second approval loses neither", async () => {
    const first = await startStack(ENV);
    const id = threadId("q-kill");
    let intr;
    try {
      intr = await asked(first, id, [{ id: "qk", name: "refund_order", args: LARGE }]);
      expect((await decide(first.server.url, id, FIN(0), approve(intr.interrupt_id, "qk"))).status).toBe(202);
    } finally {
      first.db.close();
      await first.server.kill("SIGKILL");
    }
    const again = await startServer({ MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: first.model.url, TOLLGATE_TEST_TOOLS: "1", ...ENV }, { dataDir: first.server.dataDir });
    try {
      const view = await new TollgateClient({ baseUrl: again.url, token: "tok-alice-0001" }).getThread(id);
      expect(view.pending?.calls[0]?.approvals).toMatchObject([{ by: "fin0" }]);
      expect(await decide(again.url, id, FIN(0), approve(intr.interrupt_id, "qk"))).toMatchObject({ status: 409, json: { error: { code: "already_decided" } } });
      first.model.push({ text: "Refunded." });
      const second = await decide(again.url, id, FIN(1), approve(intr.interrupt_id, "qk"), "text/event-stream");
      expect(second.text).toContain('"outcome":"completed"');
      const db = openDb(again.dataDir);
      expect(db.rows("refunds", "call_id = ?", "qk")).toHaveLength(1);
      db.close();
      expectNoStackTraces(again);
    } finally {
      await again.kill();
      await first.model.close();
    }
  });
});
