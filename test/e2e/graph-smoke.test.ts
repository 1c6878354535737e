/**
 * The gate's guarantees, once over each way a team's graph asks for approval: tollgate's kit in a
 * team's own StateGraph (`gated`) and LangChain's createAgent with humanInTheLoopMiddleware
 * (`hitl`). The same assertions for both: approve (four eyes), reject, edit, cancel, expire,
 * kill -9 while an approved call is claimed, masking. The full suites run over the kit in the
 * graph projects (vitest.config.ts); this is the smoke set for the shapes they do not cover.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { EventOf, ProtocolEvent } from "../../src/protocol/index.js";
import { REPO_ROOT, type ServerProcess, startServer } from "../helpers/server-process.js";
import { call, expectNoStackTraces, only, terminal, threadId, whenIdle } from "./support.js";

const GRAPHS_FILE = path.join(REPO_ROOT, "test/fixtures/graphs/langgraph.json");
const ALICE = "tok-alice-smoke-01";
const OPS = "tok-ops-smoke-0001";
const AUTH_TOKENS = JSON.stringify({ [ALICE]: { sub: "alice", roles: ["user"] }, [OPS]: { sub: "ops", roles: ["approver"] } });
const env = { TOLLGATE_GRAPHS: GRAPHS_FILE, AUTH_TOKENS };

/** What wire_money really did in a data dir, one line per payment. */
const wiredIn = (dataDir: string) => {
  const file = path.join(dataDir, "wired.jsonl");
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { to: string; cents: number; key: string }) : [];
};

/** Alice asks for a payment; the run stops at the gate with the wire_money call (the balance check runs at once or after, as the graph does). */
async function ask(client: TollgateClient, graph: string, id: string, to: string, cents: number) {
  const events = await client.run(id, `wire ${cents} to ${to}`, { graph_id: graph }).collect();
  const intr = terminal(events, "interrupt");
  expect(intr.calls.map((c) => [c.name, c.args, c.policy])).toEqual([["wire_money", { to: "***", cents }, "approver"]]);
  return { events, intr, callId: intr.calls[0]!.call_id };
}

const resultOf = (events: ProtocolEvent[], name: string) => only(events, "tool_result").find((r) => r.name === name) as EventOf<"tool_result"> | undefined;

describe.each(["gated", "hitl"])("the %s graph behind the gate", (graph) => {
  let server: ServerProcess;
  let alice: TollgateClient;
  let ops: TollgateClient;
  beforeAll(async () => {
    server = await startServer(env);
    alice = new TollgateClient({ baseUrl: server.url, token: ALICE });
    ops = new TollgateClient({ baseUrl: server.url, token: OPS });
  });
  afterAll(async () => {
    if (server) expectNoStackTraces(server);
    await server?.kill();
  });
  const wired = () => wiredIn(server.dataDir);

  it("approve: four eyes refuse the requester; the approver's approval runs the call once; masked in events, views, audit and logs", async () => {
    const id = threadId(`${graph}-approve`);
    const { events, intr, callId } = await ask(alice, graph, id, "amy", 100);
    const own = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: callId, approved: true }] }, { authorization: `Bearer ${ALICE}` });
    expect([own.status, own.json.error.code]).toEqual([403, "forbidden"]);
    const done = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: callId, approved: true }] }).collect();
    expect(resultOf(done, "wire_money")).toMatchObject({ status: "ok", output: "sent 100 to amy" });
    expect(wired().filter((w) => w.to === "amy")).toEqual([{ to: "amy", cents: 100, key: `${id}:${callId}` }]);
    const view = await alice.getThread(id);
    const audit = await alice.audit(id);
    expect(audit.entries.map((e) => [e.tool, e.decision, e.by])).toEqual([["wire_money", "approved", "ops"]]);
    // "amy" is the masked argument; the tool's own output names her, as outputs do unless masked.
    const shown = JSON.stringify([events, only(done, "tool_call"), view.pending, view.messages.filter((m) => m.role === "assistant"), audit]);
    expect(shown).not.toContain('"amy"');
    expect(server.stdout()).not.toContain('"amy"');
  });

  it("reject: the call never runs; the model reads the reason", async () => {
    const id = threadId(`${graph}-reject`);
    const { callId, intr } = await ask(alice, graph, id, "bob", 200);
    const done = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: callId, approved: false, reason: "not today" }] }).collect();
    expect(resultOf(done, "wire_money")).toMatchObject({ status: "rejected", error: "Rejected: not today" });
    expect(terminal(done, "done").message).toContain("Rejected: not today");
    expect(wired().filter((w) => w.to === "bob")).toEqual([]);
  });

  it("edit: the call runs once with the edited arguments and says so", async () => {
    const id = threadId(`${graph}-edit`);
    const { callId, intr } = await ask(alice, graph, id, "cat", 900);
    const done = await ops.resume(id, intr.interrupt_id, { decisions: [{ call_id: callId, approved: true, edited_args: { cents: 90 } }] }).collect();
    expect(resultOf(done, "wire_money")).toMatchObject({ status: "ok", edited: true, output: "sent 90 to cat" });
    expect(wired().filter((w) => w.to === "cat")).toEqual([{ to: "cat", cents: 90, key: `${id}:${callId}` }]);
  });

  it("cancel while waiting: the call is closed cancelled, never runs, and the decision comes too late", async () => {
    const id = threadId(`${graph}-cancel`);
    const { callId, intr } = await ask(alice, graph, id, "dan", 300);
    expect(await alice.cancel(id)).toMatchObject({ cancelled: true, status: "idle" });
    const view = await alice.getThread(id);
    expect(view).toMatchObject({ last_outcome: "cancelled", pending: null });
    expect(view.messages.find((m) => m.tool_call_id === callId)).toMatchObject({ status: "cancelled" });
    // Asked by the owner (the approver no longer sees a thread whose interrupt it never decided).
    const late = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: callId, approved: true }] }, { authorization: `Bearer ${ALICE}` });
    expect([late.status, late.json.error.code]).toEqual([409, "not_waiting"]);
    expect(wired().filter((w) => w.to === "dan")).toEqual([]);
  });
});

describe("a graph's own question", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer(env);
  });
  afterAll(async () => {
    if (server) expectNoStackTraces(server);
    await server?.kill();
  });

  it("is the thread owner's to answer: an approver neither sees it nor answers it; cancelled, the node never goes on", async () => {
    const alice = new TollgateClient({ baseUrl: server.url, token: ALICE });
    const id = threadId("asks-owner");
    const intr = terminal(await alice.run(id, "plan", { graph_id: "asks" }).collect(), "interrupt");
    const answers = [{ question_id: intr.questions[0]!.question_id, value: "yes" }];
    const asOps = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [], answers }, { authorization: `Bearer ${OPS}` });
    expect([asOps.status, asOps.json.error.code]).toEqual([404, "thread_not_found"]);
    expect(await alice.cancel(id)).toMatchObject({ cancelled: true, status: "idle" });
    const view = await alice.getThread(id);
    expect(view).toMatchObject({ last_outcome: "cancelled", pending: null });
    expect(view.messages.map((m) => m.role)).toEqual(["user"]);
  });
});

describe.each(["gated", "hitl"])("the %s graph when nobody decides, or the server dies", (graph) => {
  it("expires: the call is closed expired without a model call, and a late approval is 410", async () => {
    const s = await startServer({ ...env, APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
    try {
      const alice = new TollgateClient({ baseUrl: s.url, token: ALICE });
      const id = threadId(`${graph}-expire`);
      const { callId, intr } = await ask(alice, graph, id, "eve", 400);
      const view = await whenIdle(alice, id, "the interrupt did not expire");
      expect(view.last_outcome).toBe("expired");
      expect(view.messages.find((m) => m.tool_call_id === callId)).toMatchObject({ status: "expired", content: "Expired: approval window closed; not executed" });
      const late = await call(s.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: callId, approved: true }] }, { authorization: `Bearer ${ALICE}` });
      expect([late.status, late.json.error.code]).toEqual([410, "approval_expired"]);
      expect(wiredIn(s.dataDir)).toEqual([]);
      expectNoStackTraces(s);
    } finally {
      await s.kill();
    }
  });

  // The kill point patches better-sqlite3 (test/helpers/kill-point.mjs): SQLite only.
  it.skipIf(process.env.TOLLGATE_TEST_BACKEND === "postgres")("kill -9 once the approved call is claimed: after a restart it is 'outcome unknown', never run again", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `tollgate-smoke-kill-${graph}-`));
    const id = threadId(`${graph}-kill`);
    try {
      const first = await startServer(env, { dataDir });
      const { callId, intr } = await ask(new TollgateClient({ baseUrl: first.url, token: ALICE }), graph, id, "fay", 500);
      await first.kill();
      const doomed = await startServer({ ...env, TOLLGATE_KILL_AT: "ledger-claim:after" }, { dataDir });
      await new TollgateClient({ baseUrl: doomed.url, token: OPS, reconnect: { retries: 0 } })
        .resume(id, intr.interrupt_id, { decisions: [{ call_id: callId, approved: true }] })
        .collect()
        .catch(() => undefined); // the connection dies with the server
      expect((await doomed.exited).signal, "the server died at the claim").toBe("SIGKILL");
      const after = await startServer(env, { dataDir });
      try {
        const view = await new TollgateClient({ baseUrl: after.url, token: ALICE }).getThread(id);
        expect(view).toMatchObject({ status: "idle", last_outcome: "error" });
        expect(view.messages.find((m) => m.tool_call_id === callId)).toMatchObject({ status: "error", content: "Error: outcome unknown" });
        expect(wiredIn(dataDir)).toEqual([]);
        expectNoStackTraces(after);
      } finally {
        await after.kill();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
