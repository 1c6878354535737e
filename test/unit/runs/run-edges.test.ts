import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ANONYMOUS } from "../../../src/auth/index.js";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/logger.js";
import { createTollgate, type Tollgate } from "../../../src/index.js";
import { Scripted } from "../../helpers/scripted-model.js";
import { sqliteOf } from "../../helpers/sqlite.js";
import { defineTool, type TollgateTool } from "../../../src/tools/index.js";

// Edge cases of the run engine, in-process with scripted models and tools.

const callOnce = (name: string, args: object) => (messages: BaseMessage[]) =>
  ToolMessage.isInstance(messages.at(-1)) ? new AIMessage("ok") : new AIMessage({ content: "", tool_calls: [{ id: "c1", name, args, type: "tool_call" }] });

let tg: Tollgate | undefined;
let dataDir = "";
afterEach(async () => {
  await tg?.close();
  tg = undefined;
});

async function open(model: BaseChatModel, tools: TollgateTool[], env: Record<string, string> = {}, reuseDir = false) {
  if (!reuseDir) dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-edge-"));
  tg = await createTollgate({ config: loadConfig({ DATA_DIR: dataDir, ...env }), log: silentLogger, model, tools: () => tools });
  return tg;
}

const post = (t: Tollgate, url: string, body?: unknown, accept = "text/event-stream") =>
  t.app.request(url, { method: "POST", headers: { "content-type": "application/json", accept }, body: body === undefined ? undefined : JSON.stringify(body) });

async function pending(t: Tollgate, thread: string) {
  return ((await (await t.app.request(`/threads/${thread}`)).json()) as { pending: { interrupt_id: string } }).pending;
}

/** Brings `thread` to the gate on "pay bob", approves call c1, and cancels once `reached`: the cancel's answer and the resumed run's stream. */
async function approveThenCancel(t: Tollgate, thread: string, reached: Promise<void>) {
  await (await post(t, `/threads/${thread}/runs`, { message: "pay bob" })).text();
  const p = await pending(t, thread);
  const resumed = post(t, `/threads/${thread}/resume`, { interrupt_id: p.interrupt_id, decisions: [{ call_id: "c1", approved: true }] });
  await reached;
  const cancel = await (await post(t, `/threads/${thread}/cancel`, undefined, "application/json")).json();
  return { cancel, stream: await (await resumed).text() };
}

describe("a tool that ignores the abort", () => {
  it("is reported as outcome unknown, and the ledger records what it really did", async () => {
    const effects: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const stubborn = defineTool(
      tool(
        async ({ to }) => {
          started();
          await new Promise((r) => setTimeout(r, 100)); // deaf to the signal
          effects.push(to);
          finish();
          return `paid ${to}`;
        },
        { name: "pay", description: "pay", schema: z.object({ to: z.string() }) },
      ),
      { kind: "irreversible" },
    );
    const t = await open(new Scripted(callOnce("pay", { to: "bob" })), [stubborn]);
    const { cancel, stream } = await approveThenCancel(t, "s", running);
    expect(cancel).toMatchObject({ cancelled: true, status: "idle" });
    expect(stream).toContain('"status":"error","error":"outcome unknown"');
    expect(stream).toContain("event: cancelled");
    await finished;
    expect(effects).toEqual(["bob"]);
    // The ledger is settled once the tool's promise resolves, a few ticks after its last line.
    const ledgerRow = () => sqliteOf(t.store).prepare("SELECT status, outcome FROM ledger WHERE call_id = 'c1'").get() as { status: string; outcome: string };
    for (let i = 0; i < 100 && ledgerRow().status !== "settled"; i++) await new Promise((r) => setImmediate(r));
    const row = ledgerRow();
    expect(row.status).toBe("settled");
    expect(JSON.parse(row.outcome)).toEqual({ status: "ok", output: "paid bob" });
    // The cancel answered once the run had ended, its graph included: what the run saved when it
    // stopped came before the closer's answer, not after it (two answers to one call, in the
    // wrong order, would break the history).
    const view = (await (await t.app.request("/threads/s")).json()) as { messages: Array<{ role: string; tool_call_id?: string; status?: string }> };
    const answers = view.messages.filter((m) => m.role === "tool" && m.tool_call_id === "c1");
    expect(answers).toHaveLength(1);
    expect(view.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "c1" });
  });
});

describe("a cancel after an approved call ran", () => {
  it("closes the run on what it saved when it stopped: the call answered once, by its real result", async () => {
    let modelCalls = 0;
    let waiting!: () => void;
    const continuing = new Promise<void>((r) => (waiting = r));
    /** Asks for `pay`, then (once the result is in) never answers until the run is cancelled. */
    class AsksThenHangs extends Scripted {
      override async _generate(messages: BaseMessage[], options?: this["ParsedCallOptions"]) {
        modelCalls++;
        if (!ToolMessage.isInstance(messages.at(-1))) return super._generate(messages);
        waiting();
        return new Promise<never>((_, reject) => options?.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true }));
      }
    }
    const paid: string[] = [];
    const pay = defineTool(
      tool(async ({ to }) => (paid.push(to), `paid ${to}`), { name: "pay", description: "pay", schema: z.object({ to: z.string() }) }),
      { kind: "irreversible" },
    );
    const t = await open(new AsksThenHangs(callOnce("pay", { to: "bob" })), [pay]);
    // A slow disk: the checkpoint a stopped run saves lands well after the abort.
    const saver = t.store.checkpointer;
    const [put, putWrites] = [saver.put.bind(saver), saver.putWrites.bind(saver)];
    const slow = () => new Promise((r) => setTimeout(r, 50));
    saver.put = async (...args) => (await slow(), put(...args));
    saver.putWrites = async (...args) => (await slow(), putWrites(...args));
    const { cancel, stream } = await approveThenCancel(t, "h", continuing);
    expect(cancel).toMatchObject({ cancelled: true, status: "idle" });
    expect(stream).toContain("event: cancelled");
    expect(paid).toEqual(["bob"]);
    expect(modelCalls).toBe(2);
    const view = (await (await t.app.request("/threads/h")).json()) as { messages: Array<{ role: string; tool_call_id?: string; content: string }> };
    expect(view.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(view.messages[2]).toMatchObject({ tool_call_id: "c1", content: "paid bob" });
  });
});

describe("a message cancelled before its graph began", () => {
  it("is kept in the history, once: the run row has it, though the graph never saved", async () => {
    const t = await open(new Scripted(() => new AIMessage("hi")), []);
    await (await post(t, "/threads/early/runs", { message: "first" })).text();
    // The cancel lands while the claim is on its way: the run ends as soon as it begins.
    const starting = t.runs.startMessage(ANONYMOUS, { threadId: "early", message: "second" });
    const cancel = await t.runs.cancel(ANONYMOUS, "early");
    const run = await starting;
    await run.done;
    expect(run.outcome).toBe("cancelled");
    expect(cancel).toMatchObject({ cancelled: true, status: "idle" });
    const view = (await (await t.app.request("/threads/early")).json()) as { messages: Array<{ role: string; content: string }> };
    expect(view.messages.map((m) => `${m.role}:${m.content}`)).toEqual(["user:first", "assistant:hi", "user:second"]);
  });
});

describe("a cancel while a run commits its end", () => {
  it("at the gate: the cancel waits for the end, then closes the interrupt it opened; nothing is pending", async () => {
    const pay = defineTool(tool(async () => "paid", { name: "pay", description: "pay", schema: z.object({ to: z.string() }) }), { kind: "irreversible" });
    const t = await open(new Scripted(callOnce("pay", { to: "bob" })), [pay]);
    // The run's second transaction (its end at the gate) waits until the cancel has reached the run.
    const transaction = t.store.transaction.bind(t.store);
    let entered!: () => void;
    const inEnd = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let n = 0;
    t.store.transaction = async (fn) => {
      if (++n === 2) {
        entered();
        await held;
      }
      return transaction(fn);
    };
    const run = await t.runs.startMessage(ANONYMOUS, { threadId: "c", message: "pay bob" });
    run.controller.signal.addEventListener("abort", () => release());
    await inEnd;
    const answer = t.runs.cancel(ANONYMOUS, "c");
    void answer.finally(() => release()); // a cancel that never reaches the run must not hang the test
    expect(await answer).toEqual({ thread_id: "c", cancelled: true, status: "idle" });
    const view = (await (await t.app.request("/threads/c")).json()) as { status: string; last_outcome: string; pending: unknown; messages: { role: string; content: string }[] };
    expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled", pending: null });
    expect(view.messages.at(-1)).toMatchObject({ role: "tool", content: expect.stringContaining("Cancelled") });
  });
});

describe("rounds", () => {
  it("MAX_ROUNDS above LangGraph's default step limit still ends as max_rounds", async () => {
    let n = 0;
    const look = defineTool(tool(async () => "seen", { name: "look", description: "look", schema: z.object({}) }), { kind: "read" });
    const t = await open(new Scripted(() => new AIMessage({ content: "", tool_calls: [{ id: `l${n++}`, name: "look", args: {}, type: "tool_call" }] })), [look], { MAX_ROUNDS: "20" });
    const text = await (await post(t, "/threads/r/runs", { message: "loop" })).text();
    expect(text).toContain('"outcome":"max_rounds"');
    expect(n).toBe(20);
  });
});

describe("recovery of a closer that died mid-way", () => {
  it("finishes the expiry it was doing: expired messages, last_outcome expired", async () => {
    const refund = defineTool(tool(async () => "done", { name: "refund", description: "r", schema: z.object({}) }), { kind: "irreversible" });
    let t = await open(new Scripted(callOnce("refund", {})), [refund]);
    await (await post(t, "/threads/x/runs", { message: "refund" })).text();
    const p = await pending(t, "x");
    // What the closer had committed before the process died: interrupt expired, thread held.
    sqliteOf(t.store).prepare("UPDATE interrupts SET status = 'expired' WHERE interrupt_id = ?").run(p.interrupt_id);
    sqliteOf(t.store).prepare("UPDATE threads SET status = 'running', holder_id = 'close-expired-dead', open_interrupt_id = NULL").run();
    await t.close();
    t = await open(new Scripted(callOnce("refund", {})), [refund], {}, true);
    const view = (await (await t.app.request("/threads/x")).json()) as { status: string; last_outcome: string; messages: { content: string }[] };
    expect(view).toMatchObject({ status: "idle", last_outcome: "expired" });
    expect(view.messages.at(-1)!.content).toBe("Expired: approval window closed; not executed");
  });
});

describe("shutdown", () => {
  it("refuses new runs once shutting down", async () => {
    const t = await open(new Scripted(() => new AIMessage("hi")), []);
    await t.runs.shutdown();
    const res = await post(t, "/threads/late/runs", { message: "hello?" });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: "shutting_down" } });
  });
});

describe("cancel wins over a resume that is starting", () => {
  it("whether it lands before or after the gate, the approved call never runs and the thread ends cancelled", async () => {
    const effects: string[] = [];
    const pay = defineTool(
      tool(async ({ to }) => (effects.push(to), `paid ${to}`), { name: "pay", description: "pay", schema: z.object({ to: z.string() }) }),
      { kind: "irreversible" },
    );
    const t = await open(new Scripted(callOnce("pay", { to: "bob" })), [pay]);
    const outcomes = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const thread = `race${i}`;
      await (await post(t, `/threads/${thread}/runs`, { message: "pay bob" })).text();
      const p = await pending(t, thread);
      if (i % 2 === 0) {
        // Over HTTP, sent together: the resume's body is still being read when the cancel lands,
        // so the cancel closes the interrupt and the resume is refused.
        const [resumed, cancelled] = await Promise.all([
          post(t, `/threads/${thread}/resume`, { interrupt_id: p.interrupt_id, decisions: [{ call_id: "c1", approved: true }] }),
          post(t, `/threads/${thread}/cancel`, undefined, "application/json"),
        ]);
        await resumed.text();
        expect(((await cancelled.json()) as { cancelled: boolean }).cancelled).toBe(true);
        expect(resumed.status).toBe(409);
        outcomes.add("refused");
      } else {
        // The resume has passed the gate and started when the cancel arrives: it is stopped.
        const run = await t.runs.startResume(ANONYMOUS, { threadId: thread, interruptId: p.interrupt_id, decisions: [{ call_id: "c1", approved: true }] });
        if ("waiting_on" in run) throw new Error("a whole decision started no run");
        expect((await t.runs.cancel(ANONYMOUS, thread)).cancelled).toBe(true);
        await run.done;
        expect(run.outcome).toBe("cancelled");
        outcomes.add("stopped");
      }
      const view = (await (await t.app.request(`/threads/${thread}`)).json()) as { status: string; last_outcome: string };
      expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled" });
    }
    expect(effects).toEqual([]);
    expect([...outcomes].sort()).toEqual(["refused", "stopped"]);
  });
});
