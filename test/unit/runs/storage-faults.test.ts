import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/logger.js";
import { DemoChatModel } from "../../../src/model/index.js";
import { createTollgate, type Tollgate } from "../../../src/index.js";
import { Scripted } from "../../helpers/scripted-model.js";
import { sqliteOf } from "../../helpers/sqlite.js";
import { defineTool } from "../../../src/tools/index.js";

// The database refusing writes (a full disk, another process's lock), injected in-process at one
// write at a time. Whatever is refused: the process stays up, every stream ends once, nothing is
// dropped, no decision is used up, and the thread settles by itself once writes go through again.

/** What better-sqlite3 throws for a full disk or a held lock. */
const refusal = (code: string) => Object.assign(new Error(code === "SQLITE_BUSY" ? "database is locked" : "database or disk is full"), { code });

/** Makes `obj[method]` throw `code` the next `times` calls, then behave again. */
function refuseNext<T extends object>(obj: T, method: keyof T & string, times: number, code = "SQLITE_FULL"): void {
  const real = (obj[method] as (...a: unknown[]) => unknown).bind(obj);
  let left = times;
  (obj as Record<string, unknown>)[method] = (...args: unknown[]) => {
    if (left > 0) {
      left--;
      return Promise.reject(refusal(code)); // as the store's async methods refuse
    }
    return real(...args);
  };
}

const payOnce = (messages: BaseMessage[]) =>
  ToolMessage.isInstance(messages.at(-1))
    ? new AIMessage("paid")
    : new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "pay", args: { to: "bob" }, type: "tool_call" }] });

let tg: Tollgate | undefined;
afterEach(async () => {
  await tg?.close();
  tg = undefined;
});

async function open(model: BaseChatModel, effects: string[] = []) {
  const pay = defineTool(
    tool(async ({ to }) => (effects.push(to), `paid ${to}`), { name: "pay", description: "pay", schema: z.object({ to: z.string() }) }),
    { kind: "irreversible" },
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-faults-"));
  tg = await createTollgate({ config: loadConfig({ DATA_DIR: dataDir }), log: silentLogger, model, tools: () => [pay] });
  return tg;
}

const post = (t: Tollgate, url: string, body?: unknown, accept = "text/event-stream") =>
  t.app.request(url, { method: "POST", headers: { "content-type": "application/json", accept }, body: body === undefined ? undefined : JSON.stringify(body) });
const view = async (t: Tollgate, thread: string) =>
  (await (await t.app.request(`/threads/${thread}`)).json()) as {
    status: string;
    last_outcome: string | null;
    pending: { interrupt_id: string } | null;
    messages: Array<{ role: string; content: string; status?: string }>;
  };
const terminals = (sse: string) => [...sse.matchAll(/^event: (interrupt|done|error|cancelled)$/gm)].map((m) => m[1]);

describe("a write refused while a run ends", () => {
  it("does not take the process down: the stream ends once with storage_unavailable, the thread settles by itself", async () => {
    const t = await open(new Scripted(() => new AIMessage("hello there")));
    refuseNext(t.store.threads, "release", 2); // the run's own end, and its fallback end
    const sse = await (await post(t, "/threads/f1/runs", { message: "hi" })).text();
    expect(terminals(sse)).toEqual(["error"]);
    expect(sse).toContain('"code":"storage_unavailable"');
    await t.runs.settled();
    expect(await view(t, "f1")).toMatchObject({ status: "idle", last_outcome: "error" });
    // The log has the same single end the live stream had, and the thread takes the next message.
    const replay = await (await t.app.request("/threads/f1/stream")).text();
    expect(terminals(replay)).toEqual(["error"]);
    expect(terminals(await (await post(t, "/threads/f1/runs", { message: "again" })).text())).toEqual(["done"]);
  });
});

describe("a resume whose first write is refused", () => {
  it("does not use up the approval: the interrupt is open again, and a retry runs the call once", async () => {
    const effects: string[] = [];
    const t = await open(new Scripted(payOnce), effects);
    await (await post(t, "/threads/f2/runs", { message: "pay bob" })).text();
    const { pending } = await view(t, "f2");
    refuseNext(t.store.ledger, "claim", 1, "SQLITE_BUSY");
    const first = await (await post(t, "/threads/f2/resume", { interrupt_id: pending!.interrupt_id, decisions: [{ call_id: "c1", approved: true }] })).text();
    expect(terminals(first)).toEqual(["error"]);
    expect(first).toContain('"code":"storage_unavailable"');
    await t.runs.settled();
    expect(await view(t, "f2")).toMatchObject({ status: "waiting_human", pending: { interrupt_id: pending!.interrupt_id } });
    expect(effects).toEqual([]);
    const again = await (await post(t, "/threads/f2/resume", { interrupt_id: pending!.interrupt_id, decisions: [{ call_id: "c1", approved: true }] })).text();
    expect(terminals(again)).toEqual(["done"]);
    expect(effects).toEqual(["bob"]);
    // The trail says the first approval never took effect; only the second one ran the call.
    const entries = await t.store.audit.list("f2");
    expect(entries.map((e) => [e.decision, e.by, e.executed?.status])).toEqual([
      ["approved", "anonymous", undefined],
      ["superseded", null, undefined],
      ["approved", "anonymous", "ok"],
    ]);
  });
});

describe("a cancel whose closing write is refused", () => {
  it("answers 503 storage_unavailable (not idle over an unanswered call); the close completes by itself", async () => {
    const effects: string[] = [];
    const t = await open(new Scripted(payOnce), effects);
    await (await post(t, "/threads/f3/runs", { message: "pay bob" })).text();
    refuseNext(t.store.checkpointer, "put", 2); // the close, and the settler's first retry
    const res = await post(t, "/threads/f3/cancel", undefined, "application/json");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ error: { code: "storage_unavailable" } });
    await t.runs.settled();
    const v = await view(t, "f3");
    expect(v).toMatchObject({ status: "idle", last_outcome: "cancelled", pending: null });
    expect(v.messages.at(-1)).toMatchObject({ role: "tool", content: "Cancelled: not executed", status: "cancelled" });
    expect(effects).toEqual([]);
  });
});

describe("event log writes refused mid-run", () => {
  it("are kept and retried: a replay has every event the live stream had", async () => {
    const t = await open(new DemoChatModel({ tokenDelayMs: 1 }));
    refuseNext(t.store.runs, "appendBatches", 1, "SQLITE_BUSY"); // the first batch of tokens
    const live = await (await post(t, "/threads/f4/runs", { message: "hello" })).text();
    expect(terminals(live)).toEqual(["done"]);
    const replay = await (await t.app.request("/threads/f4/stream")).text();
    expect(replay).toBe(live.replaceAll(/^: ping\n\n/gm, ""));
  });
});

describe("requests while the database refuses", () => {
  it("answer 503 storage_unavailable with Retry-After, never 500, and apply nothing", async () => {
    const t = await open(new Scripted(() => new AIMessage("hi")));
    refuseNext(t.store.threads, "ensure", 1, "SQLITE_BUSY");
    const res = await post(t, "/threads/f5/runs", { message: "hi" });
    expect([res.status, res.headers.get("retry-after")]).toEqual([503, "1"]);
    expect(await res.json()).toMatchObject({ error: { code: "storage_unavailable" } });
    expect(await t.store.threads.get("f5")).toBeUndefined();
  });
});

describe("/healthz", () => {
  it("is 503 with its checks while the database cannot be read, 200 otherwise", async () => {
    const t = await open(new Scripted(() => new AIMessage("hi")));
    expect(await (await t.app.request("/healthz")).json()).toEqual({ ok: true });
    sqliteOf(t.store).close(); // as unreachable as a database gets
    const res = await t.app.request("/healthz");
    expect([res.status, res.headers.get("retry-after")]).toEqual([503, "1"]);
    expect(await res.json()).toEqual({ ok: false, checks: { database: "unavailable" } });
  });
});
