/**
 * The same graph under `langgraph dev`, the server LangGraph Studio talks to: it loads without
 * side effects, stops at the gate, rejects on a plain Continue, and runs an approved call once.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { langgraphDevUnavailable, REPO_ROOT, startLangGraphDev, type LangGraphDev } from "./studio/langgraph-dev.js";

interface WireMessage {
  type: string;
  content: unknown;
  tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  tool_call_id?: string;
}

const REQUEST = "refund order A-1002 5 dollars";

const unavailable = langgraphDevUnavailable();
if (unavailable) console.warn(`Skipping the LangGraph Studio test: ${unavailable}`);

describe("graphs/agent.ts as a module", () => {
  it("loads without opening a database, and leaves nothing running that keeps a process alive", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-import-"));
    try {
      // A server, an open socket or a ref'd timer would keep this child alive past its last line.
      const script = `
        const { graph } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, "graphs/agent.ts")).href)});
        console.log(JSON.stringify({ interruptBefore: graph.interruptBefore, checkpointer: graph.checkpointer ?? null }));`;
      const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: REPO_ROOT,
        env: { ...process.env, DATA_DIR: dataDir, MODEL: "demo" },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(child.signal, `the import did not let the process exit:\n${child.stderr}`).toBeNull();
      expect(child.status, child.stderr).toBe(0);
      expect(JSON.parse(child.stdout)).toEqual({ interruptBefore: ["call_tool"], checkpointer: null });
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

    async function state(threadId: string) {
      const s = await client.threads.getState<{ messages: WireMessage[] }>(threadId);
      return { next: s.next, messages: s.values.messages };
    }

    /** Calls of the last assistant message that have no tool message yet. */
    function pendingCalls(messages: WireMessage[]) {
      const ai = messages.findLast((m) => m.type === "ai");
      const answered = new Set(messages.filter((m) => m.type === "tool").map((m) => m.tool_call_id));
      return (ai?.tool_calls ?? []).filter((c) => !answered.has(c.id));
    }

    /** A new thread whose run stopped at the gate, with its one pending refund call. */
    async function haltedRefund() {
      const thread = await client.threads.create();
      const out = await client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: REQUEST }] },
      });
      expect(out).not.toHaveProperty("__error__");
      const s = await state(thread.thread_id);
      expect(s.next).toEqual(["call_tool"]);
      const pending = pendingCalls(s.messages);
      expect(pending.map((c) => c.name)).toEqual(["refund_order"]);
      expect(pending[0]!.args).toMatchObject({ order_id: "A-1002", amount_cents: 500 });
      return { threadId: thread.thread_id, call: pending[0]! };
    }

    it("loads the graph without opening the demo database", () => {
      // The server imported graphs/agent.ts and registered the graph; no tool has run yet.
      expect(dev.output()).toContain("Registering graph with id 'agent'");
      expect(fs.existsSync(dbFile())).toBe(false);
    });

    it("halts before call_tool; a plain continue rejects the pending call and runs nothing", async () => {
      const { threadId, call } = await haltedRefund();
      // The read-only lookup already ran (it opened the database); the refund did not.
      expect(refunds()).toEqual([]);

      const out = await client.runs.wait(threadId, "agent", { input: null });
      expect(out).not.toHaveProperty("__error__");
      const s = await state(threadId);
      expect(s.next).toEqual([]);
      const answer = s.messages.find((m) => m.type === "tool" && m.tool_call_id === call.id);
      expect(answer?.content).toBe("Rejected: no decision");
      expect(pendingCalls(s.messages)).toEqual([]);
      expect(refunds()).toEqual([]);
    });

    it("a run that switches the interrupt off still cannot run the call: the gate is the node", async () => {
      // Studio (and any API client) may send `interrupt_before: []`; the graph then goes straight
      // through call_tool, which finds no decision and rejects.
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: REQUEST }] },
        interruptBefore: [],
      });
      const s = await state(thread.thread_id);
      expect(s.next).toEqual([]);
      const refund = s.messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.name === "refund_order")!;
      const answer = s.messages.find((m) => m.type === "tool" && m.tool_call_id === refund.id);
      expect(answer?.content).toBe("Rejected: no decision");
      expect(refunds()).toEqual([]);
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
      expect(refunds()).toEqual([{ order_id: "A-1002", amount_cents: 500, call_id: call.id }]);

      // Sending the same approval again finds nothing pending: still one refund.
      await client.runs.wait(threadId, "agent", { input: null, config: approve });
      expect((await state(threadId)).next).toEqual([]);
      expect(refunds()).toHaveLength(1);
    });
  },
);
