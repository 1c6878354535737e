/**
 * A team's own graphs, served from a langgraph.json file (`TOLLGATE_GRAPHS`): which graph a thread
 * runs, and the gate held by the tool itself — a graph that calls an irreversible tool with no
 * gate at all (LangGraph's own ToolNode, no interrupt) gets a refusal, and nothing runs.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient, TollgateError } from "../../src/client/index.js";
import { REPO_ROOT, type ServerProcess, startServer } from "../helpers/server-process.js";
import { call, expectNoStackTraces, only, terminal, threadId, types, whenIdle } from "./support.js";

const GRAPHS_FILE = path.join(REPO_ROOT, "test/fixtures/graphs/langgraph.json");

let server: ServerProcess;
let client: TollgateClient;
beforeAll(async () => {
  server = await startServer({ TOLLGATE_GRAPHS: GRAPHS_FILE });
  client = new TollgateClient({ baseUrl: server.url });
});
afterAll(async () => {
  if (server) expectNoStackTraces(server);
  await server?.kill();
});

/** What wire_money really did, one line per payment. */
const wired = () => {
  const file = path.join(server.dataDir, "wired.jsonl");
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { to: string; cents: number; key: string }) : [];
};

async function refusals(): Promise<number> {
  const res = await call(server.url, "GET", "/metrics");
  const m = /^tollgate_gate_refusals_total\{tool="wire_money"\} (\d+)$/m.exec(res.text);
  return m ? Number(m[1]) : 0;
}

describe("graphs a team serves", () => {
  it("GET /graphs lists them, with the file's descriptions", async () => {
    expect(await client.listGraphs()).toEqual({
      items: [
        { graph_id: "ungated", description: "A graph with no gate at all" },
        { graph_id: "gated", description: null },
        { graph_id: "asks", description: null },
        { graph_id: "hitl", description: null },
        { graph_id: "desk", description: null },
      ],
    });
  });

  it("a new thread names its graph; with several and no `agent`, naming none or an unknown one is a 400, and nothing is created", async () => {
    const id = threadId("pick");
    for (const body of [{ message: "hi" }, { message: "hi", graph_id: "nope" }]) {
      const res = await call(server.url, "POST", `/threads/${id}/runs`, body);
      expect([res.status, res.json.error.code]).toEqual([400, "invalid_request"]);
    }
    const created = await call(server.url, "POST", "/threads", { graph_id: "nope" });
    expect(created.status).toBe(400);
    expect((await call(server.url, "GET", `/threads/${id}`)).status).toBe(404);
  });

  it("a thread keeps its graph for life: another graph_id is 409 graph_mismatch", async () => {
    const { thread_id, graph_id } = await client.createThread({ graph_id: "gated" });
    expect(graph_id).toBe("gated");
    const err = await client
      .run(thread_id, "wire 5 to ann", { graph_id: "ungated" })
      .collect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect((err as TollgateError).code).toBe("graph_mismatch");
    expect((await client.getThread(thread_id)).graph_id).toBe("gated");
  });

  it("a graph with no gate calls the irreversible tool: it refuses, logged and counted; the read tool runs", async () => {
    const before = await refusals();
    const id = threadId("ungated");
    const events = await client.run(id, "wire 500 to eve", { graph_id: "ungated" }).collect();
    expect(terminal(events, "done").message).toBe("Rejected: no approval for this call / balance: 900");
    expect(types(events)).toEqual(["tool_call", "tool_call", "tool_result", "tool_result", "done"]);
    // Masked where people see it, as any call of the tool.
    expect(only(events, "tool_call")[0]).toMatchObject({ name: "wire_money", args: { to: "***", cents: 500 } });
    expect(only(events, "tool_result").map((r) => [r.name, r.status])).toEqual([
      ["wire_money", "rejected"],
      ["balance", "ok"],
    ]);
    expect(wired()).toEqual([]);
    expect(await refusals()).toBe(before + 1);
    const line = server
      .stdout()
      .split("\n")
      .find((l) => l.includes("without a live approval"));
    expect(JSON.parse(line!)).toMatchObject({ level: "warn", thread_id: id, graph_id: "ungated", tool: "wire_money" });
    expect((await client.getThread(id)).status).toBe("idle");
  });

  it("a graph that asks with its own interrupt(): the question on the interrupt, answered on resume, the node goes on with the answer", async () => {
    const id = threadId("asks");
    const asked = await client.run(id, "plan my refunds", { graph_id: "asks" }).collect();
    const intr = terminal(asked, "interrupt");
    expect(intr.calls).toEqual([]);
    expect(intr.questions).toEqual([{ question_id: expect.any(String), value: { question: "Refund all three orders?" } }]);
    expect((await client.getThread(id)).pending?.questions).toEqual(intr.questions);
    const question_id = intr.questions[0]!.question_id;
    // Every question needs its answer, and only its own: else 400, and nothing is decided.
    for (const answers of [[], [{ question_id: "q-nope", value: "yes" }]]) {
      const res = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [], answers });
      expect([res.status, res.json.error.code]).toEqual([400, "invalid_request"]);
    }
    // Questions alone: the answers are the whole resume, no `decisions` beside them.
    const resumed = await call(server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, answers: [{ question_id, value: "only the first" }] }, { accept: "text/event-stream" });
    expect(resumed.status).toBe(200);
    expect(resumed.text).toContain('"message":"You said: only the first"');
    expect(await client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "completed" });
  });

  it("createAgent + humanInTheLoopMiddleware: its requests become the AI message's calls; approve one, reject the other, the read call runs", async () => {
    const id = threadId("hitl");
    const asked = await client.run(id, "wire 300 to ivy and freeze 4242", { graph_id: "hitl" }).collect();
    const intr = terminal(asked, "interrupt");
    const calls = only(asked, "tool_call");
    expect(calls.map((c) => [c.name, c.needs_approval])).toEqual([
      ["balance", false],
      ["wire_money", true],
      ["freeze_card", true],
    ]);
    // The pending calls carry the AI message's own ids; the middleware's limits show (no edit of the freeze).
    expect(intr.calls.map((c) => [c.call_id, c.name, c.args, c.editable])).toEqual([
      [calls[1]!.call_id, "wire_money", { to: "***", cents: 300 }, true],
      [calls[2]!.call_id, "freeze_card", { card: "4242" }, false],
    ]);
    // The middleware holds the read call until the resume.
    expect(only(asked, "tool_result")).toEqual([]);
    const edit = await call(server.url, "POST", `/threads/${id}/resume`, {
      interrupt_id: intr.interrupt_id,
      decisions: [{ call_id: calls[2]!.call_id, approved: true, edited_args: { card: "1111" } }],
    });
    expect([edit.status, edit.json.error.code]).toEqual([400, "invalid_request"]);
    const resumed = await client
      .resume(id, intr.interrupt_id, { decisions: [
        { call_id: calls[1]!.call_id, approved: true },
        { call_id: calls[2]!.call_id, approved: false, reason: "card is fine" },
      ] })
      .collect();
    expect(only(resumed, "tool_result").map((r) => [r.name, r.status, r.status === "ok" ? r.output : r.error])).toEqual(
      expect.arrayContaining([
        ["balance", "ok", "balance: 900"],
        ["wire_money", "ok", "sent 300 to ivy"],
        ["freeze_card", "rejected", "Rejected: card is fine"],
      ]),
    );
    expect(terminal(resumed, "done").outcome).toBe("completed");
    expect(wired().filter((w) => w.to === "ivy")).toEqual([{ to: "ivy", cents: 300, key: `${id}:${calls[1]!.call_id}` }]);
    const audit = await client.audit(id);
    expect(audit.entries.map((e) => [e.tool, e.decision])).toEqual([
      ["wire_money", "approved"],
      ["freeze_card", "rejected"],
    ]);
  });

  it("createAgent + humanInTheLoopMiddleware: an edit reaches the middleware as its edit, and runs as edited, once", async () => {
    const id = threadId("hitl-edit");
    const intr = terminal(await client.run(id, "wire 900 to joe and freeze 1", { graph_id: "hitl" }).collect(), "interrupt");
    const [wire, freeze] = intr.calls;
    const resumed = await client
      .resume(id, intr.interrupt_id, { decisions: [
        { call_id: wire!.call_id, approved: true, edited_args: { cents: 90 } },
        { call_id: freeze!.call_id, approved: true },
      ] })
      .collect();
    expect(only(resumed, "tool_result").find((r) => r.name === "wire_money")).toMatchObject({ status: "ok", edited: true });
    expect(wired().filter((w) => w.to === "joe")).toEqual([{ to: "joe", cents: 90, key: `${id}:${wire!.call_id}` }]);
  });

  it("the same tool behind the kit's gate: the interrupt, then one approval, one payment", async () => {
    const id = threadId("gated");
    const first = await client.run(id, "wire 700 to kim", { graph_id: "gated" }).collect();
    const intr = terminal(first, "interrupt");
    expect(intr.calls.map((c) => [c.name, c.args])).toEqual([["wire_money", { to: "***", cents: 700 }]]);
    expect(only(first, "tool_result").map((r) => r.name)).toEqual(["balance"]); // read calls first
    expect(wired()).not.toContainEqual(expect.objectContaining({ to: "kim" }));
    const resumed = await client.resume(id, intr.interrupt_id, { decisions: [{ call_id: intr.calls[0]!.call_id, approved: true }] }).collect();
    expect(terminal(resumed, "done").message).toBe("balance: 900 / sent 700 to kim");
    expect(wired().filter((w) => w.to === "kim")).toEqual([{ to: "kim", cents: 700, key: `${id}:${intr.calls[0]!.call_id}` }]);
  });
});

describe("a question nobody answers", () => {
  let short: ServerProcess;
  beforeAll(async () => {
    short = await startServer({ TOLLGATE_GRAPHS: GRAPHS_FILE, APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
  });
  afterAll(async () => {
    if (short) expectNoStackTraces(short);
    await short?.kill();
  });

  it("expires with its interrupt: the node is not resumed, the run outcome is expired, the thread takes the next message", async () => {
    const c = new TollgateClient({ baseUrl: short.url });
    const id = threadId("unanswered");
    const intr = terminal(await c.run(id, "plan", { graph_id: "asks" }).collect(), "interrupt");
    const idle = await whenIdle(c, id, "the unanswered question's interrupt did not expire");
    expect(idle).toMatchObject({ last_outcome: "expired", pending: null });
    expect(idle.messages.map((m) => m.role)).toEqual(["user"]);
    const late = await call(short.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [], answers: [{ question_id: intr.questions[0]!.question_id, value: "yes" }] });
    expect(late.status).toBe(410);
    // The next message starts afresh: the graph asks again.
    expect(terminal(await c.run(id, "plan again").collect(), "interrupt").questions).toHaveLength(1);
  });
});
