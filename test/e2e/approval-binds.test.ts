/**
 * What an approval binds, through both APIs (tollgate's own resume, LangGraph's positional
 * `command.resume`), and in the postgres and graph projects on the other backend and graphs: an
 * approval is of what its approver was shown. An approval that names no version of a call edited
 * since is `409 call_changed` with the call as it now stands, and nothing runs on it; an edit never
 * moves an approval onto a preview its approver did not see.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FACES, type FaceName } from "../helpers/api-face.js";
import { pgTestClusterUrl } from "../helpers/pg-test-db.js";
import { storedTextByTable } from "../helpers/stored-text.js";
import { call, expectNoStackTraces, type Stack, startStack, terminal, threadId } from "./support.js";

const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
  "tok-fin1-00001": { sub: "fin1", roles: ["finance"] },
  "tok-fin2-00001": { sub: "fin2", roles: ["finance"] },
};
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const [OPS, FIN1, FIN2] = [as("tok-ops-000001"), as("tok-fin1-00001"), as("tok-fin2-00001")];

/** Replicas on PostgreSQL share a sealing key; one SQLite file keeps its own beside the database. */
const SEALING: Record<string, string> = pgTestClusterUrl() ? { SEALING_KEY: "c2VhbGluZy1rZXktZm9yLXRoZS10ZXN0cy0wMDAwMDA=" } : {};

let s: Stack;
beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS: JSON.stringify(TOKENS), AUTH_ROLES: "finance", ...SEALING });
});
afterAll(async () => {
  if (s) expectNoStackTraces(s.server);
  await s?.stop();
});

interface Decision {
  callId: string;
  approved: boolean;
  editedArgs?: Record<string, unknown>;
  version?: number;
}

/** alice asks for these refunds; the run stops at the gate. */
async function asked(id: string, calls: Array<{ id: string; args: Record<string, unknown>; name?: string }>) {
  s.model.push({ toolCalls: calls.map((c) => ({ id: c.id, name: c.name ?? "refund_order", args: c.args })) });
  return terminal(await s.client.run(id, "refund please").collect(), "interrupt");
}

/**
 * One decision as each API takes it: tollgate's `decisions[]`, or LangGraph's positional list (the
 * call's position in the open interrupt; an edit sends the whole arguments as shown, changed).
 */
async function decide(face: FaceName, who: Record<string, string>, id: string, interruptId: string, d: Decision) {
  const headers = { ...who, accept: "text/event-stream" };
  const version = d.version !== undefined ? { version: d.version } : {};
  if (face === "tollgate") {
    const decision = { call_id: d.callId, approved: d.approved, ...(d.editedArgs ? { edited_args: d.editedArgs } : {}), ...version };
    return call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: interruptId, decisions: [decision] }, headers);
  }
  const state = (await call(s.server.url, "GET", `/langgraph/threads/${id}/state`, undefined, who)).json;
  const value = state.tasks[0].interrupts[0].value as { action_requests: Array<{ name: string; args: object }>; tollgate: { calls: Array<{ call_id: string }> } };
  const i = value.tollgate.calls.findIndex((c) => c.call_id === d.callId);
  const shown = value.action_requests[i]!;
  const one = !d.approved
    ? { type: "reject" }
    : d.editedArgs
      ? { type: "edit", edited_action: { name: shown.name, args: { ...shown.args, ...d.editedArgs } }, ...version }
      : { type: "approve", ...version };
  const decisions = value.tollgate.calls.map((_, j) => (j === i ? one : null));
  return call(s.server.url, "POST", `/langgraph/threads/${id}/runs/stream`, { assistant_id: "agent", command: { resume: { decisions } } }, headers);
}

const refunds = (callId: string) => s.db.rows<{ amount_cents: number }>("refunds", "call_id = ?", callId);

describe.each(FACES)("through %s's API", (face: FaceName) => {
  it("an approval rides on no edit its approver never saw: without the new version it is 409 call_changed, with it the edited call runs", async () => {
    const id = threadId(`${face}-ride`);
    const callId = `ride-${face}`;
    // $600: two of finance. fin2 reads it as asked; fin1 edits it to $5,000 meanwhile.
    const intr = await asked(id, [{ id: callId, args: { order_id: "A-1002", amount_cents: 60_000, reason: "damaged" } }]);
    expect(intr.calls[0]).toMatchObject({ call_id: callId, version: 1 });
    const edit = await decide(face, FIN1, id, intr.interrupt_id, { callId, approved: true, editedArgs: { amount_cents: 500_000 } });
    expect([edit.status, edit.json]).toEqual([202, { status: "waiting_human", waiting_on: [callId], run_id: null }]);

    // fin2 approves what she was shown: refused, and told what the call now is.
    const blind = await decide(face, FIN2, id, intr.interrupt_id, { callId, approved: true });
    expect(blind.status).toBe(409);
    expect(blind.json.error).toMatchObject({ code: "call_changed", call: { call_id: callId, version: 2, args: { amount_cents: 500_000 } } });
    // Naming the version she was first shown is refused the same way.
    expect((await decide(face, FIN2, id, intr.interrupt_id, { callId, approved: true, version: 1 })).json.error.code).toBe("call_changed");
    expect(refunds(callId)).toEqual([]);
    const view = (await call(s.server.url, "GET", `/threads/${id}`, undefined, FIN2)).json;
    expect(view.pending.calls[0]).toMatchObject({ version: 2, approvals: [{ by: "fin1" }] });

    // Having looked again, she approves version 2: it runs once, as edited.
    s.model.push({ text: "Refunded." });
    const approved = await decide(face, FIN2, id, intr.interrupt_id, { callId, approved: true, version: 2 });
    expect(approved.status).toBe(200);
    expect(refunds(callId)).toMatchObject([{ amount_cents: 500_000 }]);
    const audit = (await call(s.server.url, "GET", `/threads/${id}/audit`, undefined, as("tok-alice-0001"))).json.entries as Array<Record<string, unknown>>;
    expect(audit.map((e) => [e.decision, e.by, e.version])).toEqual([
      ["edited", "fin1", 1],
      ["approved", "fin2", 2],
    ]);
  });

  it("an edit does not get past a stale preview: the approval stays bound to the preview on the card its approver edited", async () => {
    const order = face === "tollgate" ? "A-1003" : "A-1005";
    const [first, second] = [threadId(`${face}-stale-1`), threadId(`${face}-stale-2`)];
    const a = await asked(first, [{ id: `st1-${face}`, args: { order_id: order, amount_cents: 2_000, reason: "late" } }]);
    const b = await asked(second, [{ id: `st2-${face}`, args: { order_id: order, amount_cents: 2_000, reason: "late" } }]);
    // Both were shown the order before either refund.
    expect(a.calls[0]!.preview).toEqual(b.calls[0]!.preview);
    s.model.push({ text: "Refunded." });
    expect((await decide(face, OPS, first, a.interrupt_id, { callId: `st1-${face}`, approved: true })).status).toBe(200);
    expect(refunds(`st1-${face}`)).toHaveLength(1);
    // The second, approved with an edit: the edit takes the preview again, but the approver saw the order before the first refund.
    s.model.push({ text: "Not refunded: the order changed." });
    const late = await decide(face, OPS, second, b.interrupt_id, { callId: `st2-${face}`, approved: true, editedArgs: { amount_cents: 1_999 } });
    expect(late.status).toBe(200);
    expect(late.text).toContain("stale_preview");
    expect(refunds(`st2-${face}`)).toEqual([]);
  });

  it("an edit of a sensitive argument while the call waits is kept sealed: no table holds it in clear, and the approved call runs with it", async () => {
    const id = threadId(`${face}-sealed`);
    const callId = `seal-${face}`;
    const secret = `ACCT-PLUM-SPARROW-${face}`;
    // Two of finance pay a vendor's account (sensitive, editable).
    const intr = await asked(id, [{ id: callId, name: "pay_vendor", args: { account: "ACCT-ORIGINAL-0001", amount_cents: 700 } }]);
    expect(intr.calls[0]).toMatchObject({ policy: "quorum", args: { account: "***" } });
    const edit = await decide(face, FIN1, id, intr.interrupt_id, { callId, approved: true, editedArgs: { account: secret } });
    expect(edit.status).toBe(202);
    const holding = [...storedTextByTable(s.db)].filter(([, text]) => text.includes(secret)).map(([table]) => table);
    expect(holding, "tables holding the edited account in clear while the call waits").toEqual([]);
    s.model.push({ text: "Paid." });
    expect((await decide(face, FIN2, id, intr.interrupt_id, { callId, approved: true, version: 2 })).status).toBe(200);
    expect(s.db.rows<{ to: string }>("outbox", "call_id = ?", callId)).toMatchObject([{ to: secret }]);
  });
});
