/**
 * LangGraph's API at /langgraph, driven by LangGraph's own SDK `Client` (@langchain/langgraph-sdk,
 * pinned in package.json): what a team's frontend does against tollgate without changing a line.
 * The shapes are here; the gate's guarantees (once, never, four eyes, races, cancel, masking,
 * expiry) run through both APIs in api-faces.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, type ServerProcess, startServer } from "../helpers/server-process.js";
import { within } from "../helpers/within.js";
import { expectNoStackTraces, type Stack, startStack, threadId } from "./support.js";

const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-bob-000001": { sub: "bob", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
};
/** uuid5 of "agent" in langgraph-api's namespace: the id `langgraph dev` gives the same graph. */
const AGENT_ASSISTANT = "fe096781-5601-53d2-b2f6-0d3403f7e9ca";

let s: Stack;
let alice: Client;
let bob: Client;
/** An approver: `refund_order` and `send_email` need someone other than who asked (four eyes). */
let ops: Client;
const clientFor = (apiKey: string, url = s.server.url) => new Client({ apiUrl: `${url}/langgraph`, apiKey, callerOptions: { maxRetries: 0 } });

beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS: JSON.stringify(TOKENS) });
  alice = clientFor("tok-alice-0001");
  bob = clientFor("tok-bob-000001");
  ops = clientFor("tok-ops-000001");
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

type Part = { event: string; data: unknown; id?: string };

/** Every part of a stream, with a deadline: a stream that never ends fails with what did not happen. */
async function collect(stream: AsyncIterable<Part>, what = "the stream did not end"): Promise<Part[]> {
  const parts: Part[] = [];
  await within(
    (async () => {
      for await (const p of stream) parts.push(p);
    })(),
    { ms: 15_000, failure: what },
  );
  return parts;
}

const named = (parts: Part[], event: string) => parts.filter((p) => p.event === event);
const lastValues = (parts: Part[]) => named(parts, "values").filter((p) => !("__interrupt__" in (p.data as object))).at(-1)!.data as { messages: Array<Record<string, unknown>> };
const interruptOf = (parts: Part[]) => (named(parts, "values").find((p) => "__interrupt__" in (p.data as object))!.data as { __interrupt__: Array<{ id: string; value: any }> }).__interrupt__;

/** A refund the model asks for, stopped at the gate. */
async function refundAsked(client: Client, id: string, callId: string, args = { order_id: "A-1001", amount_cents: 500, reason: "late" }) {
  s.model.push({ toolCalls: [{ id: callId, name: "refund_order", args }] });
  await client.threads.create({ threadId: id });
  const parts = await collect(client.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "refund my order" }] }, streamMode: ["values", "updates", "messages-tuple"] }));
  return { parts, interrupts: interruptOf(parts) };
}

describe("assistants and info", () => {
  it("answers /info and /ok, and lists one assistant per graph under langgraph-api's ids", async () => {
    expect(await (await fetch(`${s.server.url}/langgraph/ok`)).json()).toEqual({ ok: true });
    const found = await alice.assistants.search({ limit: 10 });
    expect(found).toEqual([expect.objectContaining({ assistant_id: AGENT_ASSISTANT, graph_id: "agent", metadata: { created_by: "system" } })]);
    expect(await alice.assistants.get("agent")).toMatchObject({ assistant_id: AGENT_ASSISTANT });
    const graph = await alice.assistants.getGraph(AGENT_ASSISTANT);
    expect((graph.nodes as Array<{ id: string }>).map((n) => n.id)).toEqual(expect.arrayContaining(["__start__", "agent", "call_tool"]));
    expect(await alice.assistants.getSchemas("agent")).toMatchObject({ graph_id: "agent", input_schema: { properties: { messages: {} } } });
    await expect(alice.assistants.get("no-such-graph")).rejects.toMatchObject({ status: 404 });
  });
});

describe("streaming a run", () => {
  it("streams metadata first, tokens as messages of one id, and the state as values", async () => {
    const id = threadId("lg-stream");
    s.model.push({ text: "Hello there, how can I help?" });
    const thread = await alice.threads.create({ threadId: id });
    expect(thread).toMatchObject({ thread_id: id, status: "idle", metadata: { graph_id: "agent", assistant_id: AGENT_ASSISTANT } });
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts = await collect(
      alice.runs.stream(id, AGENT_ASSISTANT, {
        input: { messages: [{ role: "user", content: "hi" }] },
        streamMode: ["values", "messages-tuple", "updates", "custom", "debug"],
        onRunCreated: (r) => void (created = r),
      }),
    );
    expect(parts[0]).toMatchObject({ event: "metadata", data: { run_id: created!.run_id, attempt: 1 } });
    expect(created!.thread_id).toBe(id);
    const tuples = named(parts, "messages").map((p) => p.data as [Record<string, unknown>, Record<string, unknown>]);
    expect(tuples.map(([m]) => m.content).join("")).toBe("Hello there, how can I help?");
    expect(new Set(tuples.map(([m]) => m.id)).size).toBe(1);
    expect(tuples[0]![1]).toMatchObject({ langgraph_node: "agent", thread_id: id, run_id: created!.run_id });
    expect(parts[1]).toMatchObject({ event: "values", data: { messages: [{ type: "human", content: "hi" }] } });
    const final = lastValues(parts);
    expect(final.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hi"],
      ["ai", "Hello there, how can I help?"],
    ]);
    expect(await alice.runs.get(id, created!.run_id)).toMatchObject({ run_id: created!.run_id, thread_id: id, status: "success", assistant_id: AGENT_ASSISTANT });
    expect(await alice.threads.get(id)).toMatchObject({ status: "idle", values: { messages: [{ content: "hi" }, { content: "Hello there, how can I help?" }] } });
  });

  it("sends the `messages` mode as metadata, partials and complete messages", async () => {
    const id = threadId("lg-msgs");
    s.model.push({ text: "One two three" });
    const parts = await collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "count" }] }, streamMode: "messages" }));
    const events = parts.map((p) => p.event).filter((e) => e !== "metadata");
    expect(events[0]).toBe("messages/metadata");
    expect(events.at(-1)).toBe("messages/complete");
    expect((named(parts, "messages/complete")[0]!.data as Array<{ content: string }>)[0]!.content).toBe("One two three");
  });

  it("waits for a run's end and answers its state", async () => {
    const id = threadId("lg-wait");
    s.model.push({ text: "Waited answer." });
    const values = (await alice.runs.wait(id, "agent", { input: { messages: [{ type: "human", content: "wait" }] } })) as { messages: Array<{ content: string }> };
    expect(values.messages.map((m) => m.content)).toEqual(["wait", "Waited answer."]);
    const runs = await alice.runs.list(id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "success" });
  });
});

describe("the graph's own stream modes", () => {
  const frameId = /^-?\d+:f\d+$/;

  it("updates and debug carry the graph's node updates and checkpoints, masked, with nothing of the run's internals", async () => {
    const id = threadId("lg-own");
    s.model.push({ toolCalls: [{ id: "own-mail", name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "secret words" } }] });
    const parts = await collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "mail eve" }] }, streamMode: ["updates", "debug"] }));
    const updates = named(parts, "updates").map((p) => p.data as Record<string, any>);
    expect(updates.map((u) => Object.keys(u))).toEqual([["agent"], ["tools"], ["__interrupt__"]]);
    expect(updates[0]!.agent.messages[0]).toMatchObject({ type: "ai", tool_calls: [{ id: "own-mail", name: "send_email", args: { to: "***", subject: "Hi", body: "***" } }] });
    const debug = named(parts, "debug").map((p) => p.data as { type: string; payload: Record<string, any> });
    expect(new Set(debug.map((d) => d.type))).toEqual(new Set(["checkpoint", "task", "task_result"]));
    expect(debug.find((d) => d.type === "task")!.payload).toMatchObject({ name: "agent", input: { messages: [{ type: "human", content: "mail eve" }] } });
    const text = JSON.stringify(parts);
    for (const hidden of ["eve@example.com", "secret words", "tollgate_gate"]) expect(text).not.toContain(hidden);
    // The run's config shows as plain data: its gate, signal and LangGraph's internals are left out.
    const configurable = debug.find((d) => d.type === "checkpoint")!.payload.config.configurable as Record<string, unknown>;
    expect(configurable).toMatchObject({ thread_id: id });
    expect(Object.keys(configurable).filter((k) => k.startsWith("__pregel_") || k === "tollgate_gate")).toEqual([]);
    // Ids that a rejoin can resume from, in the order sent.
    const ids = parts.filter((p) => p.event === "debug" || (p.event === "updates" && !("__interrupt__" in (p.data as object)))).map((p) => p.id);
    for (const i of ids) expect(i).toMatch(frameId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("rejoins a live run after any frame, the graph's chunks included, with neither a gap nor a repeat", async () => {
    const id = threadId("lg-own-rejoin");
    const modes = { streamMode: ["updates", "messages-tuple"] as ("updates" | "messages-tuple")[] };
    // A turn that looks an order up, then one that waits on the model until the cancel.
    s.model.push({ text: "Let me look.", toolCalls: [{ name: "lookup_order", args: { order_id: "A-1001" } }] });
    s.model.push({ hang: true, text: "Thinking it over" });
    let runId = "";
    const first = alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "look" }] }, ...modes, onRunCreated: (r) => void (runId = r.run_id) })[Symbol.asyncIterator]();
    const seen: Part[] = [];
    const text = () => named(seen, "messages").map((p) => (p.data as [{ type: string; content: string }])[0]).filter((m) => m.type === "ai").map((m) => m.content).join("");
    await within(
      (async () => {
        // The stream's last characters may wait for the next token: the secrets' filter holds an
        // end that could still begin one of their forms, and this model says nothing more.
        while (!text().startsWith("Let me look.Thinking it")) {
          const next = await first.next();
          if (next.done) throw new Error("the stream ended before the model's text");
          seen.push(next.value as Part);
        }
      })(),
      { ms: 10_000, failure: "the model's text did not stream" },
    );
    // Each node's update after what its model streamed, before the next node's messages.
    const order = seen
      .filter((p) => p.event !== "metadata")
      .map((p) => (p.event === "messages" ? (p.data as [{ type: string }])[0].type : Object.keys(p.data as object).join()))
      .filter((kind, i, all) => kind !== all[i - 1]);
    expect(order).toEqual(["ai", "agent", "ai", "tools", "tool", "ai"]);
    // Cut at the model's first update, and at the frame just before it (made from the same event).
    const update = seen.findIndex((p) => p.event === "updates");
    expect(seen[update]!.id).toMatch(frameId);
    const cuts = [seen[update]!, seen[update - 1]!];
    const drain = async (it: AsyncIterator<unknown>, into: Part[]) => {
      for (let n = await it.next(); !n.done; n = await it.next()) into.push(n.value as Part);
    };
    const rejoins = await Promise.all(
      cuts.map(async (cut) => {
        const it = alice.runs.joinStream(id, runId, { lastEventId: cut.id, ...modes })[Symbol.asyncIterator]();
        // Joined while the run still waits on the model: only then are its chunks still live.
        const head = await within(it.next(), { ms: 10_000, failure: "a rejoined stream sent nothing" });
        return { cut, it, parts: [head.value as Part] };
      }),
    );
    await alice.runs.cancel(id, runId);
    await within(Promise.all([drain(first, seen), ...rejoins.map((r) => drain(r.it, r.parts))]), { ms: 10_000, failure: "the streams did not end after the cancel" });
    for (const r of rejoins) {
      const after = seen.slice(seen.indexOf(r.cut) + 1).filter((p) => p.id !== undefined);
      expect(r.parts.map((p) => p.id)).toEqual(after.map((p) => p.id));
      expect(r.parts.map((p) => p.data)).toEqual(after.map((p) => p.data));
    }
  });
});

describe("the gate through LangGraph's shapes", () => {
  it("shows an approval in the HITL shape, masked, with a tollgate block, in the stream and the state", async () => {
    const id = threadId("lg-hitl");
    s.model.push({ toolCalls: [{ id: "lg-mail", name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "secret words" } }] });
    const parts = await collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "mail eve" }] }, streamMode: ["values", "updates"] }));
    const [intr] = interruptOf(parts);
    expect(intr!.value).toMatchObject({
      action_requests: [{ name: "send_email", args: { to: "***", subject: "Hi", body: "***" } }],
      review_configs: [{ action_name: "send_email", allowed_decisions: expect.arrayContaining(["approve", "reject"]) }],
      tollgate: { interrupt_id: intr!.id, calls: [{ call_id: "lg-mail" }] },
    });
    // The same request in LangChain JS's casing, as `langgraph dev` shows it.
    const v = intr!.value as Record<string, Array<Record<string, unknown>>>;
    expect(v.actionRequests).toEqual(v.action_requests);
    expect(v.reviewConfigs).toEqual(v.review_configs!.map((r) => ({ actionName: r.action_name, allowedDecisions: r.allowed_decisions, argsSchema: r.args_schema })));
    expect(JSON.stringify(parts)).not.toContain("eve@example.com");
    expect(JSON.stringify(parts)).not.toContain("secret words");
    expect(named(parts, "updates").at(-1)!.data).toEqual({ __interrupt__: [intr] });
    const state = await alice.threads.getState(id);
    expect(state.next).toEqual(["call_tool"]);
    expect(state.tasks[0]!.interrupts).toEqual([intr]);
    expect(JSON.stringify(state)).not.toContain("eve@example.com");
    expect(await alice.threads.get(id)).toMatchObject({ status: "interrupted", interrupts: { [intr!.id]: [intr] } });
  });

  it("approves positionally: the refund runs once, and the model gets its result", async () => {
    const id = threadId("lg-approve");
    await refundAsked(alice, id, "lg-r1");
    expect(s.db.rows("refunds", "call_id = ?", "lg-r1")).toHaveLength(0);
    s.model.push({ text: "Refunded." });
    const parts = await collect(ops.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } }, streamMode: ["values", "messages-tuple"] }));
    expect(s.db.rows("refunds", "call_id = ?", "lg-r1")).toHaveLength(1);
    const tool = named(parts, "messages").map((p) => (p.data as [Record<string, unknown>])[0]).find((m) => m.type === "tool");
    expect(tool).toMatchObject({ tool_call_id: "lg-r1", status: "success" });
    expect(lastValues(parts).messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  });

  it("rejects positionally with the person's message, and nothing runs", async () => {
    const id = threadId("lg-reject");
    await refundAsked(alice, id, "lg-r2");
    s.model.push({ text: "Not refunded." });
    const parts = await collect(ops.runs.stream(id, "agent", { input: {}, command: { resume: { decisions: [{ type: "reject", message: "too much" }] } } }));
    expect(s.db.rows("refunds", "call_id = ?", "lg-r2")).toHaveLength(0);
    expect(lastValues(parts).messages.find((m) => m.type === "tool")).toMatchObject({ tool_call_id: "lg-r2", content: "Rejected: too much", status: "error" });
  });

  it("binds each positional decision to its own call: approve the first, reject the second", async () => {
    const id = threadId("lg-two");
    s.model.push({
      toolCalls: [
        { id: "lg-a", name: "refund_order", args: { order_id: "A-1001", amount_cents: 100, reason: "first" } },
        { id: "lg-b", name: "refund_order", args: { order_id: "A-1001", amount_cents: 200, reason: "second" } },
      ],
    });
    const parts = await collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "two refunds" }] } }));
    expect(interruptOf(parts)[0]!.value.tollgate.calls.map((c: { call_id: string }) => c.call_id)).toEqual(["lg-a", "lg-b"]);
    s.model.push({ text: "One refunded." });
    await collect(ops.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }, { type: "reject", message: "no" }] } } }));
    expect(s.db.rows("refunds", "call_id = ?", "lg-a")).toHaveLength(1);
    expect(s.db.rows("refunds", "call_id = ?", "lg-b")).toHaveLength(0);
  });

  it("answers LangGraph's map keyed by the interrupt id, and tollgate's own form", async () => {
    const id = threadId("lg-map");
    const { interrupts } = await refundAsked(alice, id, "lg-r4");
    s.model.push({ text: "Done." });
    await collect(ops.runs.stream(id, "agent", { command: { resume: { [interrupts[0]!.id]: { decisions: [{ type: "approve" }] } } } }));
    expect(s.db.rows("refunds", "call_id = ?", "lg-r4")).toHaveLength(1);

    const id2 = threadId("lg-own");
    const asked = await refundAsked(alice, id2, "lg-r5");
    s.model.push({ text: "Done." });
    const own = { interrupt_id: asked.interrupts[0]!.id, decisions: [{ call_id: "lg-r5", approved: true }] };
    await collect(ops.runs.stream(id2, "agent", { command: { resume: own } }));
    expect(s.db.rows("refunds", "call_id = ?", "lg-r5")).toHaveLength(1);
  });

  it("hides another principal's thread as 404 on every endpoint", async () => {
    const id = threadId("lg-owner");
    await refundAsked(alice, id, "lg-r7");
    const attempts: Array<() => Promise<unknown>> = [
      () => bob.threads.get(id),
      () => bob.threads.getState(id),
      () => bob.threads.getHistory(id),
      () => bob.runs.list(id),
      () => collect(bob.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } })),
      () => collect(bob.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "mine now" }] } })),
    ];
    for (const a of attempts) await expect(a()).rejects.toMatchObject({ status: 404 });
    expect(await bob.threads.search({ limit: 100 })).not.toContainEqual(expect.objectContaining({ thread_id: id }));
    expect(s.db.rows("refunds", "call_id = ?", "lg-r7")).toHaveLength(0);
  });

  it("refuses what could open the gate around it", async () => {
    const id = threadId("lg-refuse");
    await refundAsked(alice, id, "lg-r8");
    const refusals: Array<[() => Promise<unknown>, number]> = [
      [() => collect(alice.runs.stream(id, "agent", { command: { update: { messages: [] }, resume: { decisions: [{ type: "approve" }] } } })), 400],
      [() => collect(alice.runs.stream(id, "agent", { command: { goto: "call_tool" } })), 400],
      [() => collect(alice.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }, { type: "approve" }] } } })), 400],
      [() => collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "tool", content: "ok", tool_call_id: "lg-r8" }] } })), 400],
      [() => collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "x" }] }, interruptBefore: ["call_tool"] })), 400],
      [() => collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "x" }] }, multitaskStrategy: "enqueue" })), 422],
      [() => alice.threads.updateState(id, { values: { messages: [] } }), 403],
    ];
    for (const [attempt, status] of refusals) await expect(attempt()).rejects.toMatchObject({ status });
    expect(s.db.rows("refunds", "call_id = ?", "lg-r8")).toHaveLength(0);
    expect((await alice.threads.get(id)).status).toBe("interrupted");
  });
});

describe("checkpoints", () => {
  const say = (client: Client, id: string, content: string, more: object = {}) =>
    collect(client.runs.stream(id, "agent", { input: { messages: [{ type: "human", content }] }, ...more }));

  it("a run that names the thread's head starts as any run does (useStream sends it)", async () => {
    const id = threadId("lg-head");
    s.model.push({ text: "First answer." });
    await say(alice, id, "one");
    const head = await alice.threads.getState(id);
    expect(head.checkpoint?.checkpoint_id).toBeTruthy();
    s.model.push({ text: "Second answer." });
    const parts = await say(alice, id, "two", { checkpoint: head.checkpoint! });
    expect(lastValues(parts).messages.map((m) => m.content)).toEqual(["one", "First answer.", "two", "Second answer."]);
  });

  it("a run from an earlier checkpoint forks there, and the thread goes on from the fork", async () => {
    const id = threadId("lg-fork");
    s.model.push({ text: "First answer." });
    await say(alice, id, "one");
    const first = (await alice.threads.getState(id)).checkpoint!;
    s.model.push({ text: "Second answer." });
    await say(alice, id, "two");
    s.model.push({ text: "Another answer." });
    const forked = await say(alice, id, "two, put differently", { checkpoint: first });
    expect(lastValues(forked).messages.map((m) => m.content)).toEqual(["one", "First answer.", "two, put differently", "Another answer."]);
    expect((await alice.threads.getState(id)).parent_checkpoint?.checkpoint_id).toBe(first.checkpoint_id);
    s.model.push({ text: "Third answer." });
    expect(lastValues(await say(alice, id, "three")).messages.map((m) => m.content)).toEqual(["one", "First answer.", "two, put differently", "Another answer.", "three", "Third answer."]);
  });

  it("a fork cancelled while the model answers keeps its message on the fork, not after the old head", async () => {
    const id = threadId("lg-fork-cut");
    s.model.push({ text: "First answer." });
    await say(alice, id, "one");
    const first = (await alice.threads.getState(id)).checkpoint!;
    s.model.push({ text: "Second answer." });
    await say(alice, id, "two");
    s.model.push({ hang: true, text: "Thinking" });
    let runId = "";
    const fork = alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "two, again" }] }, checkpoint: first, streamMode: "messages-tuple", onRunCreated: (r) => void (runId = r.run_id) })[Symbol.asyncIterator]();
    // The model has begun to answer: the run is in flight, nothing of it saved.
    await within(
      (async () => {
        for (let n = await fork.next(); !n.done; n = await fork.next()) if ((n.value as Part).event === "messages") return;
        throw new Error("the fork ended before the model answered");
      })(),
      { ms: 10_000, failure: "the fork's model never answered" },
    );
    await alice.runs.cancel(id, runId, true);
    await within((async () => { while (!(await fork.next()).done); })(), { ms: 10_000, failure: "the fork's stream did not end after the cancel" });
    const state = await alice.threads.getState(id);
    expect((state.values as { messages: Array<{ content: string }> }).messages.map((m) => m.content)).toEqual(["one", "First answer.", "two, again"]);
  });

  it("refuses to fork from before an approved call, from where calls waited, or from a checkpoint the thread does not have", async () => {
    const id = threadId("lg-fork-refused");
    s.model.push({ text: "Hello." });
    await say(alice, id, "hi");
    const before = (await alice.threads.getState(id)).checkpoint!;
    s.model.push({ toolCalls: [{ id: "fork-refund", name: "refund_order", args: { order_id: "A-1001", amount_cents: 500, reason: "late" } }] });
    expect(interruptOf(await say(alice, id, "refund my order", { streamMode: ["values"] }))).toHaveLength(1);
    const waiting = (await alice.threads.getState(id)).checkpoint!;
    s.model.push({ text: "Refunded." });
    await collect(ops.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } }));
    expect((await alice.threads.getState(id)).next).toEqual([]);
    const head = await alice.threads.getState(id);
    for (const [checkpoint, status] of [
      [before, 422],
      [waiting, 422],
      [{ ...before, checkpoint_id: "1f000000-0000-6000-8000-000000000000" }, 404],
    ] as const) {
      await expect(say(alice, id, "refund it again", { checkpoint })).rejects.toMatchObject({ status });
    }
    // Nothing ran, nothing moved.
    expect(await alice.threads.getState(id)).toEqual(head);
    // Where calls waited, even calls that were then refused: their decisions were that run's.
    const other = threadId("lg-fork-waited");
    s.model.push({ toolCalls: [{ id: "fork-refused", name: "refund_order", args: { order_id: "A-1001", amount_cents: 700, reason: "late" } }] });
    await say(alice, other, "refund my order");
    const waited = (await alice.threads.getState(other)).checkpoint!;
    s.model.push({ text: "Not refunded." });
    await collect(ops.runs.stream(other, "agent", { command: { resume: { decisions: [{ type: "reject", message: "no" }] } } }));
    await expect(say(alice, other, "then refund half", { checkpoint: waited })).rejects.toMatchObject({ status: 422 });
  });
});

describe("a thread's history", () => {
  it("lists its states newest first, each linked to the one before, masked, paged with `before`", async () => {
    const id = threadId("lg-history");
    s.model.push({ toolCalls: [{ id: "hist-mail", name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "secret words" } }] });
    await collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "mail eve" }] } }));
    s.model.push({ text: "Sent." });
    await collect(alice.runs.stream(id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } }));
    s.model.push({ text: "You're welcome." });
    await collect(alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "thanks" }] } }));
    const history = await alice.threads.getHistory(id, { limit: 50 });
    expect(history[0]).toEqual(await alice.threads.getState(id));
    expect(history.length).toBeGreaterThanOrEqual(3);
    for (let i = 0; i + 1 < history.length; i++) expect(history[i]!.parent_checkpoint?.checkpoint_id).toBe(history[i + 1]!.checkpoint.checkpoint_id);
    const sizes = history.map((h) => (h.values as { messages: unknown[] }).messages.length);
    expect(sizes).toEqual([...sizes].sort((x, y) => y - x));
    // The state that waited on the approval: the call masked, as everywhere else.
    const waited = history.find((h) => h.next.includes("call_tool"))!;
    expect((waited.values as { messages: Array<{ tool_calls?: unknown[] }> }).messages.at(-1)!.tool_calls).toEqual([expect.objectContaining({ name: "send_email", args: { to: "***", subject: "Hi", body: "***" } })]);
    expect(JSON.stringify(history)).not.toContain("eve@example.com");
    expect(JSON.stringify(history)).not.toContain("secret words");
    expect(await alice.threads.getHistory(id, { limit: 2, before: { configurable: { checkpoint_id: history[0]!.checkpoint.checkpoint_id } } })).toEqual(history.slice(1, 3));
    // A subgraph's own history (useStream asks for its subagents'): this graph has none.
    expect(await alice.threads.getHistory(id, { checkpoint: { checkpoint_ns: "desk:1" } })).toEqual([]);
    expect(await alice.threads.getHistory(id, { limit: 2 })).toEqual(history.slice(0, 2));
  });
});

describe("rejoining a stream", () => {
  it("rejoins after any frame with neither a gap nor a repeat", async () => {
    const id = threadId("lg-rejoin");
    s.model.push({ text: "alpha beta gamma delta" });
    let runId = "";
    const whole = await collect(
      alice.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "go" }] }, streamMode: ["values", "messages-tuple"], onRunCreated: (r) => void (runId = r.run_id) }),
    );
    const framed = whole.filter((p) => p.id !== undefined);
    expect(framed.length).toBeGreaterThan(3);
    for (const cut of [0, 2, framed.length - 2]) {
      const rest = await collect(alice.runs.joinStream(id, runId, { lastEventId: framed[cut]!.id, streamMode: ["values", "messages-tuple"] }));
      expect(rest.map((p) => p.id)).toEqual(framed.slice(cut + 1).map((p) => p.id));
      expect(rest.map((p) => p.data)).toEqual(framed.slice(cut + 1).map((p) => p.data));
    }
    expect(await collect(alice.runs.joinStream(id, runId, { lastEventId: framed.at(-1)!.id, streamMode: ["values", "messages-tuple"] }))).toEqual([]);
    const badMode = await fetch(`${s.server.url}/langgraph/threads/${id}/runs/${runId}/stream?stream_mode=everything`, { headers: { "x-api-key": "tok-alice-0001" } });
    expect([badMode.status, ((await badMode.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
  });
});

describe("a team's graphs through /langgraph", () => {
  const ALICE = "tok-alice-0001";
  const OPS = "tok-ops-000001";
  let server: ServerProcess;
  let a: Client;
  let o: Client;
  beforeAll(async () => {
    server = await startServer({ TOLLGATE_GRAPHS: path.join(REPO_ROOT, "test/fixtures/graphs/langgraph.json"), AUTH_TOKENS: JSON.stringify(TOKENS) });
    a = clientFor(ALICE, server.url);
    o = clientFor(OPS, server.url);
  });
  afterAll(async () => {
    if (server) expectNoStackTraces(server);
    await server?.kill();
  });
  const wired = () => {
    const file = path.join(server.dataDir, "wired.jsonl");
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : [];
  };

  it("lists one assistant per graph, each found by its id or its graph id", async () => {
    const found = await a.assistants.search({ limit: 10 });
    expect(found.map((x) => x.graph_id).sort()).toEqual(["asks", "desk", "gated", "hitl", "ungated"]);
    for (const x of found) expect(await a.assistants.get(x.graph_id)).toMatchObject({ assistant_id: x.assistant_id });
  });

  it("createAgent's HITL middleware: the approval in its own shape, masked; a positional approval pays once", async () => {
    const id = threadId("lg-hitl-graph");
    const parts = await collect(a.runs.stream(id, "hitl", { input: { messages: [{ type: "human", content: "wire 100 to amy" }] }, streamMode: ["values", "updates"] }));
    const [intr] = interruptOf(parts);
    expect(intr!.value).toMatchObject({ action_requests: [{ name: "wire_money", args: { to: "***", cents: 100 } }], review_configs: [{ action_name: "wire_money" }] });
    // The payee is only in the user's own words: not in the call, the request or its description.
    expect(JSON.stringify(intr)).not.toContain("amy");
    expect(JSON.stringify(lastValues(parts).messages.filter((m) => m.type !== "human"))).not.toContain("amy");
    expect(await a.threads.get(id)).toMatchObject({ metadata: { graph_id: "hitl" } });
    await collect(o.runs.stream(id, "hitl", { command: { resume: { decisions: [{ type: "approve" }] } } }));
    expect(wired()).toHaveLength(1);
  });

  it("debug chunks of createAgent's HITL middleware show no real argument: not in its action requests, not in a task's input", async () => {
    const id = threadId("lg-hitl-debug");
    const parts = await collect(a.runs.stream(id, "hitl", { input: { messages: [{ type: "human", content: "wire 100 to amy" }] }, streamMode: ["debug", "updates"] }) as AsyncIterable<Part>);
    expect(named(parts, "debug").length).toBeGreaterThan(0);
    expect(JSON.stringify(parts)).not.toContain('"to":"amy"');
  });

  it("interrupt() in a plan node: the graph's own value under its id, answered with a bare resume value", async () => {
    const id = threadId("lg-asks");
    const parts = await collect(a.runs.stream(id, "asks", { input: { messages: [{ type: "human", content: "refund all three" }] }, streamMode: ["values"] }));
    const [question] = interruptOf(parts);
    expect(question!.value).toEqual({ question: "Refund all three orders?" });
    const done = await collect(a.runs.stream(id, "asks", { command: { resume: "yes, all three" }, streamMode: ["values"] }));
    expect(lastValues(done).messages.at(-1)).toMatchObject({ type: "ai", content: "You said: yes, all three" });
  });

  it("what nodes write comes as custom, the graph's tasks as tasks; a subgraph's chunks under its namespace, only when asked", async () => {
    const ask = { input: { messages: [{ type: "human", content: "wire 500 to eve" }] }, streamMode: ["updates", "custom", "tasks"] as ("updates" | "custom" | "tasks")[] };
    const parts = await collect(a.runs.stream(threadId("lg-desk"), "desk", { ...ask, streamSubgraphs: true }) as AsyncIterable<Part>);
    expect(named(parts, "custom").map((p) => p.data)).toEqual([{ stage: "intake", note: "checking the request" }]);
    expect([...new Set(named(parts, "tasks").map((p) => (p.data as { name: string }).name))]).toEqual(["intake", "desk"]);
    expect(parts.some((p) => p.event.startsWith("tasks|desk:"))).toBe(true);
    const nested = parts.filter((p) => p.event.startsWith("updates|desk:")).map((p) => p.data as Record<string, any>);
    expect(nested.map((u) => Object.keys(u)[0])).toEqual(["agent", "tools"]);
    expect(nested[0]!.agent.messages[0].tool_calls).toEqual(expect.arrayContaining([expect.objectContaining({ name: "wire_money", args: { to: "***", cents: 500 } })]));
    expect(JSON.stringify(nested)).not.toContain('"eve"');
    const flat = await collect(a.runs.stream(threadId("lg-desk-flat"), "desk", ask));
    expect(flat.filter((p) => p.event.includes("|"))).toEqual([]);
    expect(named(flat, "custom")).toHaveLength(1);
  });

  it("through ThreadStream too: what nodes write on custom, the graph's tasks, a subgraph's under its namespace, masked", async () => {
    type Event = { seq: number; method: string; params: { namespace: string[]; data: any } };
    const id = threadId("lg-desk-thread");
    const thread = a.threads.stream(id, { assistantId: "desk" });
    const events: Event[] = [];
    // Beside it, a raw stream that asks for the root graph's events only (prefix [], depth 0).
    const rootOnly = rawEvents(id, { channels: ["tasks", "lifecycle"], namespaces: [[]], depth: 0 });
    try {
      // Subscribed before the run starts, as useStream does: the stream waits for the thread.
      const sub = await thread.subscribe({ channels: ["custom", "tasks", "lifecycle"] });
      await thread.run.start({ input: { messages: [{ type: "human", content: "wire 500 to eve" }] } });
      await within(
        (async () => {
          for await (const e of sub as AsyncIterable<Event>) {
            events.push(e);
            if (e.method === "lifecycle" && e.params.data.event === "interrupted") return;
          }
        })(),
        { ms: 15_000, failure: "the desk's run did not stop at the gate" },
      );
    } finally {
      await thread.close();
    }
    expect(events.filter((e) => e.method === "custom").map((e) => [e.params.namespace, e.params.data])).toEqual([[[], { payload: { stage: "intake", note: "checking the request" } }]]);
    const tasks = events.filter((e) => e.method === "tasks");
    const names = (nested: boolean) => [...new Set(tasks.filter((e) => (e.params.namespace.length > 0) === nested).map((e) => e.params.data.name))];
    expect(names(false)).toEqual(["intake", "desk"]);
    expect(tasks.filter((e) => e.params.namespace.length).every((e) => /^desk:/.test(e.params.namespace[0]!))).toBe(true);
    expect(names(true)).toContain("agent");
    // A task's result shows the call as the state does: its account masked.
    expect(JSON.stringify(tasks)).toContain('"wire_money"');
    expect(JSON.stringify(events)).not.toContain('"eve"');
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => x - y));
    const root = await rootOnly;
    expect(root.filter((e) => e.method === "tasks").map((e) => e.params.data.name)).toEqual(tasks.filter((e) => !e.params.namespace.length).map((e) => e.params.data.name));
    expect(root.every((e) => e.params.namespace.length === 0)).toBe(true);
    // Opened after the run has ended, a stream replays them in their places too: the SDK reopens
    // its stream from the run's start whenever a subscription widens it, and a run can end between.
    const finished = () => server.stdout().split("\n").some((l) => l.startsWith("{") && JSON.parse(l).msg === "run finished" && JSON.parse(l).thread_id === id);
    await expect.poll(finished, { timeout: 15_000, message: "the desk's run was never logged as finished" }).toBe(true);
    const later = await rawEvents(id, { channels: ["custom", "tasks", "lifecycle"] });
    expect(later.map((e) => [e.seq, e.method, e.params.namespace, e.params.data])).toEqual(events.map((e) => [e.seq, e.method, e.params.namespace, e.params.data]));
  });

  /** The thread's events as a raw SSE stream asking for `filter`, read until the run stops at the gate. */
  async function rawEvents(id: string, filter: { channels: string[]; namespaces?: string[][]; depth?: number }): Promise<Array<{ seq: number; method: string; params: { namespace: string[]; data: any } }>> {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/langgraph/threads/${id}/stream/events`, {
      method: "POST",
      headers: { "x-api-key": ALICE, "content-type": "application/json" },
      body: JSON.stringify(filter),
      signal: ac.signal,
    });
    const events: Array<{ seq: number; method: string; params: { namespace: string[]; data: any } }> = [];
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      await within(
        (async () => {
          while (!events.some((e) => e.params.data.event === "interrupted")) {
            const { value, done } = await reader.read();
            if (done) throw new Error("the stream closed");
            buffer += value;
            const blocks = buffer.split("\n\n");
            buffer = blocks.pop()!;
            for (const block of blocks) {
              const data = /^data: (.+)$/m.exec(block)?.[1];
              // Up to the stop and no further, as the ThreadStream beside it reads: one read can carry what follows.
              if (data && !events.some((e) => e.params.data.event === "interrupted")) events.push(JSON.parse(data));
            }
          }
        })(),
        { ms: 15_000, failure: `the stream asking for ${JSON.stringify(filter)} did not see the run stop at the gate` },
      );
    } finally {
      ac.abort();
    }
    return events;
  }

  it("a thread keeps its graph: another assistant on it is 409", async () => {
    const id = threadId("lg-keep");
    await collect(a.runs.stream(id, "asks", { input: { messages: [{ type: "human", content: "hello" }] } }));
    await expect(collect(a.runs.stream(id, "gated", { input: { messages: [{ type: "human", content: "again" }] } }))).rejects.toMatchObject({ status: 409 });
  });
});
