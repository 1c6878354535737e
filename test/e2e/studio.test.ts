/**
 * The graphs of `langgraph.json` under `langgraph dev`, the server LangGraph Studio talks to: the
 * built-in agent and a team's own graphs (tollgate's kit; `createAgent` with
 * `humanInTheLoopMiddleware`), all with `defineTool` tools. Each loads without side effects, stops
 * at the gate, runs a call approved the LangGraph way (`command: { resume }`) once, as edited when
 * edited, and does not run a rejected one. The built-in agent also pauses again (at the node's
 * interrupt) on a plain Continue and takes `configurable.decisions`. With LangSmith tracing on,
 * its runs are traced through the server's masking tracer.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/graph/index.js";
import { type LangSmithStandIn, startLangSmithStandIn, type TracedRun } from "../helpers/langsmith-stand-in.js";
import { langgraphDevUnavailable, REPO_ROOT, startLangGraphDev, studioGraphs, type LangGraphDev } from "./studio/langgraph-dev.js";

interface WireCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

interface WireMessage {
  type: string;
  content: unknown;
  tool_calls?: WireCall[];
  tool_call_id?: string;
}

const REQUEST = "refund order A-1002 5 dollars";

/**
 * Each graph `langgraph.json` serves, and how it waits for a person: the node its run stops at,
 * and the static interrupts it is compiled with (the built-in agent stops before `call_tool`; a
 * team's graph pauses inside the kit's `call_tool` or the HITL middleware's node).
 */
const GATES: Record<string, { node: string; interruptBefore: string[] }> = {
  agent: { node: "call_tool", interruptBefore: ["call_tool"] },
  "team-kit": { node: "call_tool", interruptBefore: [] },
  "team-hitl": { node: "HumanInTheLoopMiddleware.after_model", interruptBefore: [] },
};
const GRAPH_IDS = studioGraphs().map((g) => g.id);

describe("langgraph.json", () => {
  it("serves the built-in agent and a team's own graphs, each one listed here with its gate", () => {
    expect(GRAPH_IDS).toEqual(expect.arrayContaining(["agent", "team-kit", "team-hitl"]));
    expect([...GRAPH_IDS].sort()).toEqual(Object.keys(GATES).sort());
  });
});

const unavailable = langgraphDevUnavailable();
if (unavailable) console.warn(`Skipping the LangGraph Studio test: ${unavailable}`);

describe.each(studioGraphs())("$file as a module (langgraph.json → $id)", ({ id, file, symbol }) => {
  it("loads without opening a database, and leaves nothing running that keeps a process alive", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-import-"));
    try {
      // A server, an open socket or a ref'd timer would keep this child alive past its last line.
      const script = `
        const { ${symbol}: graph } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, file)).href)});
        console.log(JSON.stringify({ interruptBefore: graph.interruptBefore ?? [], checkpointer: graph.checkpointer ?? null }));`;
      const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: REPO_ROOT,
        env: { ...process.env, DATA_DIR: dataDir, MODEL: "demo" },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(child.signal, `the import did not let the process exit:\n${child.stderr}`).toBeNull();
      expect(child.status, child.stderr).toBe(0);
      expect(JSON.parse(child.stdout)).toEqual({ interruptBefore: GATES[id]!.interruptBefore, checkpointer: null });
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(unavailable !== null)(
  `LangGraph Studio server (langgraph dev)${unavailable ? ` — skipped: ${unavailable}` : ""}`,
  () => {
    let dev: LangGraphDev;
    let client: Client;
    const dbFile = () => path.join(dev.dataDir, "tollgate.db");
    const refunds = () => {
      const db = new Database(dbFile(), { readonly: true, fileMustExist: true });
      try {
        return db.prepare("SELECT order_id, amount_cents, call_id FROM refunds").all() as Array<{
          order_id: string;
          amount_cents: number;
          call_id: string;
        }>;
      } finally {
        db.close();
      }
    };

    beforeAll(async () => {
      dev = await startLangGraphDev();
      client = new Client({ apiUrl: dev.url });
    }, 60_000);

    afterAll(async () => {
      await dev?.stop();
    }, 20_000);

    /** What the thread shows: the nodes it waits at, its messages, its interrupts' values. */
    async function state(threadId: string) {
      const s = await client.threads.getState<{ messages: WireMessage[] }>(threadId);
      const interrupts = s.tasks.flatMap((t) => t.interrupts.map((i) => i.value as ApprovalRequest));
      return { next: s.next, messages: s.values.messages, interrupts };
    }

    /** After a plain continue: paused at call_tool's own interrupt, which lists the pending call. */
    function expectApprovalPause(s: Awaited<ReturnType<typeof state>>, call: WireCall) {
      expect(s.next).toEqual(["call_tool"]);
      expect(s.interrupts).toEqual([
        {
          kind: "approval",
          calls: [{ call_id: call.id, name: call.name, args: call.args }],
          resume_with: JSON.stringify({ decisions: [{ call_id: call.id, approved: true }] }),
        },
      ]);
      expect(pendingCalls(s.messages).map((c) => c.id)).toEqual([call.id]);
    }

    /** Calls of the last assistant message that have no tool message yet. */
    function pendingCalls(messages: WireMessage[]) {
      const ai = messages.findLast((m) => m.type === "ai");
      const answered = new Set(messages.filter((m) => m.type === "tool").map((m) => m.tool_call_id));
      return (ai?.tool_calls ?? []).filter((c) => !answered.has(c.id));
    }

    /** A new thread of `graphId` whose run stopped at the gate, with its one pending refund call. */
    async function haltedRefund(graphId = "agent") {
      const thread = await client.threads.create();
      const out = await client.runs.wait(thread.thread_id, graphId, {
        input: { messages: [{ role: "user", content: REQUEST }] },
      });
      expect(out).not.toHaveProperty("__error__");
      const s = await state(thread.thread_id);
      expect(s.next).toEqual([GATES[graphId]!.node]);
      // Under the HITL middleware the order lookup is still pending too: it runs unasked on resume.
      const pending = pendingCalls(s.messages).filter((c) => c.name === "refund_order");
      expect(pending).toHaveLength(1);
      expect(pending[0]!.args).toMatchObject({ order_id: "A-1002", amount_cents: 500 });
      return { threadId: thread.thread_id, call: pending[0]! };
    }

    it("loads every graph without opening the demo database", () => {
      // The server imported each graph's file and registered it; no tool has run yet.
      for (const id of GRAPH_IDS) expect(dev.output()).toContain(`Registering graph with id '${id}'`);
      expect(fs.existsSync(dbFile())).toBe(false);
    });

    /** The tool message answering `callId`, and the refunds it made. */
    async function answerTo(threadId: string, callId: string) {
      const s = await state(threadId);
      const answer = s.messages.find((m) => m.type === "tool" && m.tool_call_id === callId);
      return { next: s.next, content: String(answer?.content ?? ""), refunds: refunds().filter((r) => r.call_id === callId) };
    }

    it("halts before call_tool; a plain continue pauses again at the node's interrupt and runs nothing", async () => {
      const { threadId, call } = await haltedRefund();
      // The read-only lookup already ran (it opened the database); the refund did not.
      expect(refunds()).toEqual([]);
      // The static pause carries no interrupt value.
      expect((await state(threadId)).interrupts).toEqual([]);

      for (let i = 0; i < 2; i++) {
        const out = await client.runs.wait(threadId, "agent", { input: null });
        expect(out).not.toHaveProperty("__error__");
        const s = await state(threadId);
        expectApprovalPause(s, call);
        expect(s.messages.filter((m) => m.type === "tool" && m.tool_call_id === call.id)).toEqual([]);
        expect(refunds()).toEqual([]);
      }
      expect((await client.threads.get(threadId)).status).toBe("interrupted");

      // A resume value the gate cannot read rejects: fail closed.
      await client.runs.wait(threadId, "agent", { command: { resume: "yes please" } });
      const s = await state(threadId);
      expect(s.next).toEqual([]);
      const answer = s.messages.find((m) => m.type === "tool" && m.tool_call_id === call.id);
      expect(answer?.content).toBe("Rejected: no decision");
      expect(refunds()).toEqual([]);
    });

    it("a run that switches the interrupt off still cannot run the call: the gate is the node", async () => {
      // Studio (and any API client) may send `interrupt_before: []`; the graph then goes straight
      // into call_tool, which finds no decision and pauses at its own interrupt.
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: REQUEST }] },
        interruptBefore: [],
      });
      const s = await state(thread.thread_id);
      const refund = s.messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.name === "refund_order")!;
      expectApprovalPause(s, refund);
      expect(refunds()).toEqual([]);

      // Refusing it there with a reason.
      await client.runs.wait(thread.thread_id, "agent", {
        command: { resume: { decisions: [{ call_id: refund.id, approved: false, reason: "not today" }] } },
      });
      const after = await state(thread.thread_id);
      expect(after.next).toEqual([]);
      const answer = after.messages.find((m) => m.type === "tool" && m.tool_call_id === refund.id);
      expect(answer?.content).toBe("Rejected: not today");
      expect(refunds()).toEqual([]);
    });

    it("approving with command: { resume: { decisions } } runs the call exactly once", async () => {
      // Straight from the static pause, the way the SDK and useStream().submit resume.
      const { threadId, call } = await haltedRefund();
      const resume = { decisions: [{ call_id: call.id, approved: true }] };
      const out = await client.runs.wait(threadId, "agent", { command: { resume } });
      expect(out).not.toHaveProperty("__error__");
      const s = await state(threadId);
      expect(s.next).toEqual([]);
      const answer = s.messages.find((m) => m.type === "tool" && m.tool_call_id === call.id);
      expect(JSON.parse(String(answer?.content))).toMatchObject({ order_id: "A-1002", amount_cents: 500 });
      const of = (id: string) => refunds().filter((r) => r.call_id === id);
      expect(of(call.id)).toEqual([{ order_id: "A-1002", amount_cents: 500, call_id: call.id }]);

      // From the second pause, with the interrupt's own resume_with (what Studio's resume box gets).
      const second = await haltedRefund();
      await client.runs.wait(second.threadId, "agent", { input: null });
      const paused = await state(second.threadId);
      expectApprovalPause(paused, second.call);
      await client.runs.wait(second.threadId, "agent", { command: { resume: JSON.parse(paused.interrupts[0]!.resume_with) } });
      expect((await state(second.threadId)).next).toEqual([]);
      expect(of(second.call.id)).toHaveLength(1);

      // Resuming either thread again finds nothing pending: still one refund each.
      for (const t of [threadId, second.threadId]) {
        await client.runs.wait(t, "agent", { command: { resume } });
        expect((await state(t)).next).toEqual([]);
      }
      expect([...of(call.id), ...of(second.call.id)]).toHaveLength(2);
    });

    it("continuing with configurable.decisions approving the call runs it exactly once", async () => {
      const { threadId, call } = await haltedRefund();
      const approve = { configurable: { decisions: [{ call_id: call.id, approved: true }] } };

      const out = await client.runs.wait(threadId, "agent", { input: null, config: approve });
      expect(out).not.toHaveProperty("__error__");
      const s = await state(threadId);
      expect(s.next).toEqual([]);
      const answer = s.messages.find((m) => m.type === "tool" && m.tool_call_id === call.id);
      expect(JSON.parse(String(answer?.content))).toMatchObject({ order_id: "A-1002", amount_cents: 500 });
      const mine = () => refunds().filter((r) => r.call_id === call.id);
      expect(mine()).toEqual([{ order_id: "A-1002", amount_cents: 500, call_id: call.id }]);

      // Sending the same approval again finds nothing pending: still one refund.
      await client.runs.wait(threadId, "agent", { input: null, config: approve });
      expect((await state(threadId)).next).toEqual([]);
      expect(mine()).toHaveLength(1);
    });

    // Each graph, approved the way LangGraph clients and Studio resume (the HITL decisions shape,
    // which every graph here accepts), outside any tollgate server: the tool itself takes the
    // approval LangGraph delivered for exactly that call.
    describe.each(GRAPH_IDS)("graph %s, decided with command: { resume }", (graphId) => {
      it("stops at the gate; an approve runs the call, once", async () => {
        const { threadId, call } = await haltedRefund(graphId);
        expect((await client.threads.get(threadId)).status).toBe("interrupted");
        expect(refunds().filter((r) => r.call_id === call.id)).toEqual([]);

        const approve = { decisions: [{ type: "approve" }] };
        expect(await client.runs.wait(threadId, graphId, { command: { resume: approve } })).not.toHaveProperty("__error__");
        const ran = await answerTo(threadId, call.id);
        expect(ran.next).toEqual([]);
        expect(JSON.parse(ran.content)).toMatchObject({ order_id: "A-1002", amount_cents: 500 });
        expect(ran.refunds).toEqual([{ order_id: "A-1002", amount_cents: 500, call_id: call.id }]);

        // The same resume again finds nothing to approve: still one refund.
        await client.runs.wait(threadId, graphId, { command: { resume: approve } });
        expect((await answerTo(threadId, call.id)).refunds).toHaveLength(1);
      });

      it("an edit runs the call as edited, once", async () => {
        const { threadId, call } = await haltedRefund(graphId);
        const edit = { type: "edit", editedAction: { name: call.name, args: { ...call.args, amount_cents: 300 } } };
        expect(await client.runs.wait(threadId, graphId, { command: { resume: { decisions: [edit] } } })).not.toHaveProperty("__error__");
        const ran = await answerTo(threadId, call.id);
        expect(ran.content).toMatch(/^Approved with edits: amount_cents\n/);
        expect(ran.refunds).toEqual([{ order_id: "A-1002", amount_cents: 300, call_id: call.id }]);
      });

      it("a reject does not run the call, and says why", async () => {
        const { threadId, call } = await haltedRefund(graphId);
        const reject = { decisions: [{ type: "reject", message: "not today" }] };
        expect(await client.runs.wait(threadId, graphId, { command: { resume: reject } })).not.toHaveProperty("__error__");
        const refused = await answerTo(threadId, call.id);
        // The kit answers "Rejected: <reason>"; the HITL middleware answers with the reason itself.
        expect(refused.content).toMatch(/^(Rejected: )?not today$/);
        expect(refused.refunds).toEqual([]);
      });
    });
  },
);

describe.skipIf(unavailable !== null)("LangGraph Studio traced to LangSmith", () => {
  const KEY = "lsv2-studio-test-key-000000";
  let standIn: LangSmithStandIn;
  let dev: LangGraphDev;
  beforeAll(async () => {
    standIn = await startLangSmithStandIn();
    dev = await startLangGraphDev({ LANGSMITH_TRACING: "true", LANGSMITH_ENDPOINT: standIn.url, LANGSMITH_API_KEY: KEY });
  }, 60_000);
  afterAll(async () => {
    await dev?.stop();
    await standIn?.close();
  }, 20_000);

  it("masks the sensitive arguments of an approved email as the server does: traced, but no address and no body", async () => {
    const client = new Client({ apiUrl: dev.url });
    const thread = await client.threads.create();
    const input = { messages: [{ role: "user", content: "email the customer of A-1002 that the parcel is late" }] };
    expect(await client.runs.wait(thread.thread_id, "agent", { input })).not.toHaveProperty("__error__");
    const s = await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id);
    const call = s.values.messages.findLast((m) => m.type === "ai")?.tool_calls?.[0];
    expect(call?.name).toBe("send_email");
    const { to, body } = call!.args as { to: string; body: string };
    expect(to).toBe("grace@example.com");
    const resume = { decisions: [{ call_id: call!.id, approved: true }] };
    expect(await client.runs.wait(thread.thread_id, "agent", { command: { resume } })).not.toHaveProperty("__error__");

    // Both runs reach LangSmith, whole: their root runs ended (the last thing a tracer sends of a
    // run), and the email tool's run is there, its inputs masked.
    const ended = (r: TracedRun) => !r.parent_run_id && !!r.end_time;
    await standIn.waitFor(() => [...standIn.runs.values()].filter(ended).length >= 2, "both root runs ended", 20_000);
    await standIn.waitFor(() => [...standIn.runs.values()].some((r) => r.run_type === "tool" && r.name === "send_email" && r.end_time), "the email's tool run", 20_000);
    const email = [...standIn.runs.values()].find((r) => r.run_type === "tool" && r.name === "send_email")!;
    expect(email.inputs).toMatchObject({ to: "***", body: "***", subject: "About your order A-1002" });
    const uploaded = standIn.allBodies();
    expect(uploaded).toContain("About your order A-1002");
    for (const value of [to, body]) expect(uploaded, `an upload shows ${value}`).not.toContain(value);
    expect(uploaded).not.toContain(KEY);
  });
});
