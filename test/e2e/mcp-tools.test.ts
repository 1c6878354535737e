/**
 * Tools from a real MCP server (a child process on stdio, loaded with `MultiServerMCPClient`) in a
 * team's `createAgent`, served by tollgate: the read-only tool runs unasked, the destructive one
 * stops at the gate; approved it runs once, rejected never; a cancel aborts an MCP call in flight
 * (the server is told to stop), and the ledger keeps the aborted call from running again.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { EventOf, ProtocolEvent } from "../../src/protocol/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { defineTool, type TollgateTool } from "../../src/tools/index.js";
import { type DeskEvent, readLog } from "../fixtures/mcp/desk-server.js";
import { inProcessTollgates } from "../helpers/in-process-tollgate.js";
import { REPO_ROOT } from "../helpers/server-process.js";
import { within } from "../helpers/within.js";

const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const open = inProcessTollgates();

let dir: string;
let logFile: string;
let mcp: MultiServerMCPClient;
let tools: TollgateTool[];
let loaded: StructuredToolInterface[];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-mcp-"));
  logFile = path.join(dir, "desk.jsonl");
  fs.writeFileSync(logFile, "");
  mcp = new MultiServerMCPClient({
    mcpServers: {
      desk: {
        transport: "stdio",
        command: process.execPath,
        args: ["--import", TSX_LOADER, path.join(REPO_ROOT, "test/fixtures/mcp/stdio-server.ts")],
        env: { MCP_DESK_LOG: logFile, PATH: process.env.PATH ?? "" },
        stderr: "inherit",
      },
    },
  });
  // No kind given: each tool's MCP hints decide.
  loaded = await mcp.getTools();
  tools = loaded.map((t) => defineTool(t));
});
afterAll(async () => {
  await mcp?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Calls the tool the message names (`call <tool> <json args>`) and then repeats the results. */
const model = () =>
  new ScriptedChatModel({
    rules: [{ when: /^call (\w+) (.+)$/, reply: ({ match }) => ({ toolCalls: [{ name: match[1]!, args: JSON.parse(match[2]!) as Record<string, unknown> }] }), then: ({ toolResults }) => toolResults.map((m) => m.text).join(" / ") }],
  });

/** A team's createAgent over the MCP tools: people are asked about each tool that waits at the gate. */
async function serve() {
  const interruptOn = Object.fromEntries(tools.filter((t) => t.kind === "irreversible").map((t) => [t.name, true]));
  const agent = createAgent({ model: model(), tools, middleware: [humanInTheLoopMiddleware({ interruptOn })] });
  const tg = await open({ graphs: { desk: agent } });
  return new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tg.app.request(url, init) });
}

/** The server's log once it holds a line `seen` accepts: awaited on the file's changes, not polled. */
async function logged(seen: (e: DeskEvent) => boolean, failure: string): Promise<DeskEvent[]> {
  const holds = () => readLog(logFile).some(seen);
  if (holds()) return readLog(logFile);
  const watcher = fs.watch(logFile);
  try {
    await within(
      new Promise<void>((resolve) => {
        watcher.on("change", () => holds() && resolve());
        if (holds()) resolve();
      }),
      { ms: 10_000, failure },
    );
  } finally {
    watcher.close();
  }
  return readLog(logFile);
}

const refunds = (order: string) => readLog(logFile).filter((e) => "refunded" in e && e.refunded === order);
const last = (events: ProtocolEvent[]) => events.at(-1)!;
const resultOf = (events: ProtocolEvent[]) => events.find((e): e is EventOf<"tool_result"> => e.type === "tool_result");

describe("MCP tools behind tollgate", () => {
  it("the tools' kinds come from their hints", () => {
    expect(Object.fromEntries(tools.map((t) => [t.name, t.kind]))).toMatchObject({ lookup_order: "read", refund_order: "irreversible", void_order: "irreversible", slow_lookup: "read", slow_refund: "irreversible" });
  });

  it("the read-only tool runs unasked; its JSON Schema is checked", async () => {
    const client = await serve();
    const events = await client.run("read", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({ name: "lookup_order", needs_approval: false });
    expect(resultOf(events)).toMatchObject({ name: "lookup_order", status: "ok" });
    expect(last(events)).toMatchObject({ type: "done" });
    const bad = await client.run("read-bad", 'call lookup_order {"order_id":7}').collect();
    expect(resultOf(bad)?.status).not.toBe("ok");
  });

  it("the destructive tool stops at the gate; approved, it runs exactly once", async () => {
    const client = await serve();
    const asked = last(await client.run("refund", 'call refund_order {"order_id":"A-1","amount_cents":300}').collect());
    expect(asked).toMatchObject({ type: "interrupt", calls: [{ name: "refund_order", policy: "owner", args_schema: { type: "object", properties: { amount_cents: { type: "integer" } } } }] });
    if (asked.type !== "interrupt") return;
    expect(refunds("A-1")).toEqual([]);
    const decision = { decisions: [{ call_id: asked.calls[0]!.call_id, approved: true }] };
    const done = await client.resume("refund", asked.interrupt_id, decision).collect();
    expect(resultOf(done)).toMatchObject({ status: "ok", output: "Refunded 300 cents on A-1" });
    expect(last(done)).toMatchObject({ type: "done", message: "Refunded 300 cents on A-1" });
    // The same approval again is refused; the call does not run a second time.
    await expect(client.resume("refund", asked.interrupt_id, decision).collect()).rejects.toMatchObject({ status: expect.any(Number) });
    expect(refunds("A-1")).toEqual([{ refunded: "A-1", amount_cents: 300 }]);
  });

  it("an MCP tool put in a graph as loaded, named nowhere, is still gated: with no approval step it is refused", async () => {
    const tg = await open({ graphs: { desk: createAgent({ model: model(), tools: loaded }) } });
    const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => tg.app.request(url, init) });
    const events = await client.run("as-loaded", 'call refund_order {"order_id":"L-1","amount_cents":5}').collect();
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({ name: "refund_order", needs_approval: true });
    expect(resultOf(events)).toMatchObject({ status: "rejected", error: "Rejected: no approval for this call" });
    expect(refunds("L-1")).toEqual([]);
    const read = await client.run("as-loaded-read", 'call lookup_order {"order_id":"A-1"}').collect();
    expect(resultOf(read)).toMatchObject({ name: "lookup_order", status: "ok" });
  });

  it("rejected, the destructive tool never reaches the server", async () => {
    const client = await serve();
    const asked = last(await client.run("reject", 'call refund_order {"order_id":"A-2","amount_cents":100}').collect());
    if (asked.type !== "interrupt") throw new Error(`expected an interrupt, got ${asked.type}`);
    const done = await client.resume("reject", asked.interrupt_id, { decisions: [{ call_id: asked.calls[0]!.call_id, approved: false, reason: "not today" }] }).collect();
    expect(resultOf(done)).toMatchObject({ status: "rejected", error: "Rejected: not today" });
    expect(refunds("A-2")).toEqual([]);
  });

  it("a cancel aborts a read-only MCP call in flight: the server is told to stop", async () => {
    const client = await serve();
    const run = client.run("cancel-read", 'call slow_lookup {"order_id":"R-1"}').collect();
    await logged((e) => "started" in e && e.started === "R-1", "the slow lookup did not start");
    await client.cancel("cancel-read");
    await logged((e) => "aborted" in e && e.aborted === "R-1", "the MCP server was not told to stop the call");
    expect(last(await within(run, { ms: 10_000, failure: "the cancelled run did not end" }))).toMatchObject({ type: "cancelled" });
  });

  it("a cancel aborts an approved MCP call in flight; the ledger keeps it from running again", async () => {
    const client = await serve();
    const asked = last(await client.run("cancel-refund", 'call slow_refund {"order_id":"R-2"}').collect());
    if (asked.type !== "interrupt") throw new Error(`expected an interrupt, got ${asked.type}`);
    const decision = { decisions: [{ call_id: asked.calls[0]!.call_id, approved: true }] };
    const run = client.resume("cancel-refund", asked.interrupt_id, decision).collect();
    await logged((e) => "started" in e && e.started === "R-2", "the approved call did not start");
    await client.cancel("cancel-refund");
    await logged((e) => "aborted" in e && e.aborted === "R-2", "the MCP server was not told to stop the call");
    expect(last(await within(run, { ms: 10_000, failure: "the cancelled run did not end" }))).toMatchObject({ type: "cancelled" });
    await client.resume("cancel-refund", asked.interrupt_id, decision).collect().catch(() => undefined);
    expect(readLog(logFile).filter((e) => "started" in e && e.started === "R-2")).toHaveLength(1);
    // The server had started it: what it did before stopping is unknown, not "not executed".
    const { messages } = await client.getThread("cancel-refund");
    expect(messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["Error: outcome unknown"]);
  });
});
