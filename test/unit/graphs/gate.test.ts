import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { compileAgentGraph } from "../../../graphs/agent.js";
import { readDecisions } from "../../../src/graph/index.js";
import { type ExecutionLedger, REUSED_CALL_ID } from "../../../src/ledger/index.js";
import type { ApprovalRequest } from "../../../src/graph/index.js";
import { openSqliteStore, type SqliteStore } from "../../../src/store/index.js";
import { defineTool, hashArgs, MASK } from "../../../src/tools/index.js";
import { Scripted } from "../../helpers/scripted-model.js";

type Call = { id: string; name: string; args: Record<string, unknown> };

/** Asks for its calls (one refund by default) in one batch, then answers "ok" once it sees a tool result. */
const asker = (calls: Call[] = [{ id: "c1", name: "pay", args: { cents: 5 } }]) =>
  new Scripted((messages) =>
    ToolMessage.isInstance(messages.at(-1))
      ? new AIMessage("ok")
      : new AIMessage({ content: "", tool_calls: calls.map((c) => ({ ...c, type: "tool_call" as const })) }),
  );

interface SetupOptions {
  calls?: Call[];
  ledger?: ExecutionLedger;
  /** null: compiled without one. */
  checkpointer?: MemorySaver | null;
  /** Runs inside `pay`, before it returns. */
  onPay?: (cents: number) => void;
}

/** `pay` is irreversible and its `card` argument is sensitive (masked wherever it is shown). */
function setup(opts: SetupOptions = {}) {
  const paid: string[] = [];
  const pay = defineTool(
    tool(
      async ({ cents }, config) => {
        paid.push(String(config.configurable?.idempotency_key));
        opts.onPay?.(cents);
        return `paid ${cents}`;
      },
      { name: "pay", description: "pay", schema: z.object({ cents: z.number(), card: z.string().optional() }) },
    ),
    { kind: "irreversible", sensitive: ["card"] },
  );
  const graph = compileAgentGraph(
    { model: asker(opts.calls), tools: [pay], ledger: opts.ledger },
    opts.checkpointer === null ? undefined : (opts.checkpointer ?? new MemorySaver()),
  );
  return { graph, paid };
}

type Graph = ReturnType<typeof setup>["graph"];

const cfg = (thread: string) => ({ configurable: { thread_id: thread } });

async function toGate(graph: Graph, thread: string) {
  await graph.invoke({ messages: [new HumanMessage("pay")] }, cfg(thread));
  const s = await graph.getState(cfg(thread));
  expect(s.next).toEqual(["call_tool"]);
  // The static pause: no interrupt value yet.
  expect(s.tasks.flatMap((t) => t.interrupts)).toEqual([]);
}

async function toolMessages(graph: Graph, thread: string) {
  const messages = (await graph.getState(cfg(thread))).values.messages as BaseMessage[];
  return messages.filter((m) => ToolMessage.isInstance(m));
}

async function continueWith(graph: Graph, thread: string, decisions: unknown) {
  await graph.invoke(null, { configurable: { thread_id: thread, decisions } });
  return (await toolMessages(graph, thread))[0]!;
}

async function resumeWith(graph: Graph, thread: string, resume: unknown) {
  await graph.invoke(new Command({ resume }), cfg(thread));
  return (await toolMessages(graph, thread))[0]!;
}

/** The interrupt values the thread is paused at (empty at the static pause or when not paused). */
async function pausedAt(graph: Graph, thread: string) {
  const s = await graph.getState(cfg(thread));
  return { next: s.next, values: s.tasks.flatMap((t) => t.interrupts.map((i) => i.value as ApprovalRequest)) };
}

describe("the call_tool gate: configurable.decisions", () => {
  it("runs an approved call once, with its idempotency key", async () => {
    const { graph, paid } = setup();
    await toGate(graph, "t1");
    const msg = await continueWith(graph, "t1", [{ call_id: "c1", approved: true, args_hash: hashArgs({ cents: 5 }) }]);
    expect(msg.content).toBe("paid 5");
    expect(paid).toEqual(["t1:c1"]);
  });

  it("runs nothing when the arguments differ from the ones approved", async () => {
    const { graph, paid } = setup();
    await toGate(graph, "t2");
    const msg = await continueWith(graph, "t2", [{ call_id: "c1", approved: true, args_hash: hashArgs({ cents: 500 }) }]);
    expect(msg.content).toBe("Error: arguments differ from the approved call; not executed");
    expect(paid).toEqual([]);
  });

  it("rejects on decisions that approve nothing (the Hono server's empty array too), with a reason, and on anything but a literal true", async () => {
    for (const [decisions, content] of [
      [[], "Rejected: no decision"],
      [{}, "Rejected: no decision"],
      [[{ call_id: "other", approved: true }], "Rejected: no decision"],
      [[{ call_id: "c1", approved: false }], "Rejected: User denied"],
      [[{ call_id: "c1", approved: false, reason: "too much" }], "Rejected: too much"],
      [[{ call_id: "c1", approved: "true" }], "Rejected: User denied"],
      ["not json", "Rejected: no decision"],
    ] as const) {
      const { graph, paid } = setup();
      await toGate(graph, "t3");
      expect((await continueWith(graph, "t3", decisions)).content).toBe(content);
      // Decisions were given, so the node decided at once: no second pause.
      expect((await pausedAt(graph, "t3")).next).toEqual([]);
      expect(paid).toEqual([]);
    }
  });
});

describe("the call_tool gate: Command({ resume })", () => {
  it("approves with the same shapes as configurable.decisions, wrapped or not, and runs the call once", async () => {
    for (const resume of [
      { decisions: [{ call_id: "c1", approved: true }] },
      { decisions: { c1: { approved: true } } },
      '{"decisions": [{"call_id": "c1", "approved": true}]}',
      { decisions: '{"c1": {"approved": true}}' },
      [{ call_id: "c1", approved: true }],
      { c1: { approved: true } },
      '[{"call_id": "c1", "approved": true}]',
    ]) {
      const { graph, paid } = setup();
      await toGate(graph, "r1");
      const msg = await resumeWith(graph, "r1", resume);
      expect(msg.content, JSON.stringify(resume)).toBe("paid 5");
      expect(paid).toEqual(["r1:c1"]);
      expect((await pausedAt(graph, "r1")).next).toEqual([]);
      // Resuming again finds nothing pending: the call does not run twice.
      await graph.invoke(new Command({ resume }), cfg("r1"));
      expect(paid).toEqual(["r1:c1"]);
    }
  });

  it("rejects with the person's reason, or as the default refusal; an args_hash still binds", async () => {
    for (const [resume, content] of [
      [{ decisions: [{ call_id: "c1", approved: false, reason: "too much" }] }, "Rejected: too much"],
      [{ decisions: { c1: { approved: false } } }, "Rejected: User denied"],
      [{ decisions: [{ call_id: "c1", approved: "true" }] }, "Rejected: User denied"],
      [
        { decisions: [{ call_id: "c1", approved: true, args_hash: hashArgs({ cents: 500 }) }] },
        "Error: arguments differ from the approved call; not executed",
      ],
    ] as const) {
      const { graph, paid } = setup();
      await toGate(graph, "r2");
      expect((await resumeWith(graph, "r2", resume)).content).toBe(content);
      expect(paid).toEqual([]);
    }
  });

  it("a plain continue pauses again at an interrupt that lists the pending calls, masked; a resume then approves", async () => {
    const card = "4111 1111 1111 1111";
    const calls = [
      { id: "c1", name: "pay", args: { cents: 5, card } },
      { id: "c2", name: "pay", args: { cents: 7 } },
    ];
    const { graph, paid } = setup({ calls });
    await toGate(graph, "r3");

    for (let i = 0; i < 2; i++) {
      // Continue without decisions, twice: each time it stops at the same interrupt, and runs nothing.
      await graph.invoke(null, cfg("r3"));
      const paused = await pausedAt(graph, "r3");
      expect(paused.next).toEqual(["call_tool"]);
      expect(paused.values).toEqual([
        {
          kind: "approval",
          calls: [
            { call_id: "c1", name: "pay", args: { cents: 5, card: MASK } },
            { call_id: "c2", name: "pay", args: { cents: 7 } },
          ],
          resume_with: '{"decisions":[{"call_id":"c1","approved":true},{"call_id":"c2","approved":true}]}',
        },
      ]);
      expect(JSON.stringify(paused.values)).not.toContain(card);
      expect(await toolMessages(graph, "r3")).toEqual([]);
      expect(paid).toEqual([]);
    }

    // Approve one, refuse the other: decisions are per call.
    await graph.invoke(
      new Command({ resume: { decisions: [{ call_id: "c1", approved: true }, { call_id: "c2", approved: false, reason: "no" }] } }),
      cfg("r3"),
    );
    expect((await toolMessages(graph, "r3")).map((m) => m.content)).toEqual(["paid 5", "Rejected: no"]);
    expect(paid).toEqual(["r3:c1"]);
    expect((await pausedAt(graph, "r3")).next).toEqual([]);
  });

  it("the interrupt's own resume_with, pasted as it is, approves every call it lists", async () => {
    const { graph, paid } = setup();
    await toGate(graph, "r4");
    await graph.invoke(null, cfg("r4"));
    const [request] = (await pausedAt(graph, "r4")).values;
    await graph.invoke(new Command({ resume: request!.resume_with }), cfg("r4"));
    expect((await toolMessages(graph, "r4")).map((m) => m.content)).toEqual(["paid 5"]);
    expect(paid).toEqual(["r4:c1"]);
  });

  it("an empty decisions field (a blank config form in Studio) is no decisions: it pauses, runs nothing", async () => {
    for (const blank of [null, ""]) {
      const { graph, paid } = setup();
      await toGate(graph, "r6");
      await graph.invoke(null, { configurable: { thread_id: "r6", decisions: blank } });
      expect((await pausedAt(graph, "r6")).values).toHaveLength(1);
      expect(await toolMessages(graph, "r6")).toEqual([]);
      expect(paid).toEqual([]);
    }
  });

  it("configurable.decisions also answers the second pause", async () => {
    const { graph, paid } = setup();
    await toGate(graph, "r5");
    await graph.invoke(null, cfg("r5"));
    expect((await pausedAt(graph, "r5")).values).toHaveLength(1);
    expect((await continueWith(graph, "r5", [{ call_id: "c1", approved: true }])).content).toBe("paid 5");
    expect(paid).toEqual(["r5:c1"]);
  });

  it("a run with interruptBefore: [] still pauses, at the node's interrupt, and runs nothing until approved", async () => {
    const { graph, paid } = setup();
    await graph.invoke({ messages: [new HumanMessage("pay")] }, { ...cfg("r6"), interruptBefore: [] });
    const paused = await pausedAt(graph, "r6");
    expect(paused.next).toEqual(["call_tool"]);
    expect(paused.values.map((v) => v.calls.map((c) => c.call_id))).toEqual([["c1"]]);
    expect(paid).toEqual([]);
    expect((await resumeWith(graph, "r6", { decisions: [{ call_id: "c1", approved: true }] })).content).toBe("paid 5");
    expect(paid).toEqual(["r6:c1"]);
  });

  it("without a checkpointer (nothing could resume a pause) a run with interruptBefore: [] rejects: fail closed", async () => {
    const { graph, paid } = setup({ checkpointer: null });
    const out = await graph.invoke({ messages: [new HumanMessage("pay")] }, { interruptBefore: [] });
    const answers = (out.messages as BaseMessage[]).filter((m) => ToolMessage.isInstance(m));
    expect(answers.map((m) => m.content)).toEqual(["Rejected: no decision"]);
    expect(paid).toEqual([]);
  });

  it("a resume value it cannot read rejects every pending call: fail closed", async () => {
    for (const resume of [
      "garbage",
      42,
      true,
      { decisions: "not json" },
      { decisions: 7 },
      { approved: true },
      { decisions: [{ approved: true }] },
      [{ call_id: "c9", approved: true }],
    ]) {
      const { graph, paid } = setup();
      await toGate(graph, "r7");
      expect((await resumeWith(graph, "r7", resume)).content, JSON.stringify(resume)).toBe("Rejected: no decision");
      expect(paid).toEqual([]);
      expect((await pausedAt(graph, "r7")).next).toEqual([]);
    }
  });
});

describe("the call_tool gate: stop and exactly once", () => {
  it("a cancel during the first of two approved calls stops the second from starting", async () => {
    const controller = new AbortController();
    const { graph, paid } = setup({
      calls: [
        { id: "c1", name: "pay", args: { cents: 5 } },
        { id: "c2", name: "pay", args: { cents: 7 } },
      ],
      // The first call cancels the run and still ends normally: it settles before the abort is
      // taken up (untilAborted waits one turn), so only the loop's own check can stop c2.
      onPay: () => controller.abort(new Error("cancelled by test")),
    });
    await toGate(graph, "s1");
    const decisions = [
      { call_id: "c1", approved: true },
      { call_id: "c2", approved: true },
    ];
    await expect(graph.invoke(null, { configurable: { thread_id: "s1", decisions }, signal: controller.signal })).rejects.toThrow();
    // Give a started c2 every chance to show up.
    await new Promise((r) => setTimeout(r, 100));
    expect(paid).toEqual(["s1:c1"]);
  });

  describe("with the SQLite ledger", () => {
    const dirs: string[] = [];
    const stores: SqliteStore[] = [];
    const open = () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-gate-"));
      dirs.push(dir);
      return reopen(dir);
    };
    const reopen = async (dir: string) => {
      const store = await openSqliteStore(dir);
      stores.push(store);
      return { dir, store };
    };
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close();
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    });

    it("claims once; a second claim is in doubt; settled calls give their outcome; other arguments never count", async () => {
      const { ledger } = (await open()).store;
      const entry = { threadId: "t", callId: "c1", name: "pay", argsHash: "h1" };
      expect(await ledger.peek("t:c1")).toBeUndefined();
      expect(await ledger.claim("t:c1", entry)).toEqual({ kind: "claimed" });
      expect(await ledger.claim("t:c1", entry)).toEqual({ kind: "in_doubt" });
      await ledger.settle("t:c1", { status: "ok", output: "paid 5" });
      expect(await ledger.claim("t:c1", entry)).toEqual({ kind: "settled", outcome: { status: "ok", output: "paid 5" } });
      expect(await ledger.claim("t:c1", { ...entry, argsHash: "h2" })).toEqual({ kind: "settled", outcome: REUSED_CALL_ID });
      // Another key is its own claim.
      expect(await ledger.claim("t:c2", { ...entry, callId: "c2" })).toEqual({ kind: "claimed" });
    });

    it("replaying the approved step from its checkpoint (time travel), even in a new process, reuses the recorded result", async () => {
      const checkpointer = new MemorySaver();
      const { dir, store } = await open();
      const first = setup({ ledger: store.ledger, checkpointer });
      await toGate(first.graph, "x1");
      const approve = [{ call_id: "c1", approved: true }];
      expect((await continueWith(first.graph, "x1", approve)).content).toBe("paid 5");
      expect(first.paid).toEqual(["x1:c1"]);

      // The checkpoint taken at the gate, before call_tool ran.
      const history = [];
      for await (const s of first.graph.getStateHistory(cfg("x1"))) history.push(s);
      const atGate = history.find((s) => s.next.includes("call_tool"))!;
      expect(atGate).toBeDefined();

      // Same process, same graph: replay the step with the same approval.
      await first.graph.invoke(null, { configurable: { ...atGate.config.configurable, decisions: approve } });
      expect(first.paid).toEqual(["x1:c1"]);
      expect((await toolMessages(first.graph, "x1")).map((m) => m.content)).toEqual(["paid 5"]);

      // A new process: the ledger reopened from the file, a new graph, the same checkpoints.
      await store.close();
      stores.splice(stores.indexOf(store), 1);
      const second = setup({ ledger: (await reopen(dir)).store.ledger, checkpointer });
      await second.graph.invoke(null, { configurable: { ...atGate.config.configurable, decisions: approve } });
      expect(second.paid).toEqual([]);
      expect(first.paid).toEqual(["x1:c1"]);
      expect((await toolMessages(second.graph, "x1")).map((m) => m.content)).toEqual(["paid 5"]);
    });
  });
});

describe("readDecisions", () => {
  const want = new Map([["c1", { call_id: "c1", approved: true, reason: undefined, args_hash: undefined }]]);

  it("reads an array, an object keyed by call id, either as JSON, and any of them wrapped in { decisions }", () => {
    const shapes = [[{ call_id: "c1", approved: true }], { c1: { approved: true } }, '[{"call_id":"c1","approved":true}]', '{"c1":{"approved":true}}'];
    for (const d of [...shapes, ...shapes.map((decisions) => ({ decisions })), ...shapes.map((decisions) => JSON.stringify({ decisions }))]) {
      expect(readDecisions(d), JSON.stringify(d)).toEqual(want);
    }
  });

  it("reads nothing from what it cannot read; a keyed entry cannot name another call", () => {
    for (const d of [undefined, null, "", "nope", 42, true, { decisions: null }, { decisions: "nope" }]) {
      expect(readDecisions(d), JSON.stringify(d)).toEqual(new Map());
    }
    expect([...readDecisions({ c1: { call_id: "c2", approved: true } }).keys()]).toEqual(["c1"]);
    expect(readDecisions({ c1: true }).get("c1")?.approved).toBe(false);
  });
});
