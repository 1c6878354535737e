/**
 * LangGraph Studio is hosted (smith.langchain.com) and cannot be reached offline, so its connect
 * sequence is replayed as its browser sends it: Chrome's private-network preflight, then `/info`,
 * assistants, the graph and its schemas, thread search and history, with JSON bodies labelled
 * `text/plain`, from Studio's origin. Allowed only when that origin is in CORS_ORIGINS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNoStackTraces, parseSse, type Stack, startStack, threadId } from "./support.js";

const STUDIO = "https://smith.langchain.com";
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-bob-000001": { sub: "bob", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
};
let s: Stack;
let plain: Stack;
/** Studio against a server with auth: its key sent as `x-api-key`, as the SDK in Studio's page sends it. */
let authed: Stack;
beforeAll(async () => {
  [s, plain, authed] = await Promise.all([startStack({ CORS_ORIGINS: STUDIO }), startStack(), startStack({ CORS_ORIGINS: STUDIO, AUTH_TOKENS: JSON.stringify(TOKENS) })]);
});
afterAll(async () => {
  for (const x of [s, plain, authed]) expectNoStackTraces(x.server);
  await Promise.all([s?.stop(), plain?.stop(), authed?.stop()]);
});

/** A request as Studio's page sends it: its origin, JSON bodies as `text/plain` (no preflight for those). */
const studio = (stack: Stack, path: string, body?: unknown) =>
  fetch(`${stack.server.url}/langgraph${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { Origin: STUDIO, ...(body === undefined ? {} : { "Content-Type": "text/plain;charset=UTF-8" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const preflight = (stack: Stack, path: string) =>
  fetch(`${stack.server.url}/langgraph${path}`, {
    method: "OPTIONS",
    headers: { Origin: STUDIO, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type", "Access-Control-Request-Private-Network": "true" },
  });

describe("Studio's connect sequence, from an origin in CORS_ORIGINS", () => {
  it("passes the private-network preflight and reads info, assistants, graph, schemas, threads and history", async () => {
    const pre = await preflight(s, "/assistants/search");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-private-network")).toBe("true");
    expect(pre.headers.get("access-control-allow-origin")).toBe(STUDIO);

    const info = await studio(s, "/info");
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ flags: { assistants: true } });

    const assistants = await studio(s, "/assistants/search", { limit: 100, offset: 0 });
    expect(assistants.status).toBe(200);
    const [agent] = (await assistants.json()) as Array<{ assistant_id: string; graph_id: string }>;
    expect(agent).toMatchObject({ graph_id: "agent" });
    expect((await studio(s, `/assistants/${agent!.assistant_id}/graph?xray=true`)).status).toBe(200);
    expect((await studio(s, `/assistants/${agent!.assistant_id}/schemas`)).status).toBe(200);
    expect((await studio(s, `/assistants/${agent!.assistant_id}/subgraphs?recurse=true`)).status).toBe(200);

    const id = threadId("studio");
    s.model.push({ text: "Hello from the graph." });
    const run = await studio(s, `/threads/${id}/runs/stream`, { assistant_id: agent!.assistant_id, input: { messages: [{ type: "human", content: "hi" }] }, stream_mode: ["values"] });
    expect(run.status).toBe(200);
    expect(run.headers.get("access-control-expose-headers")).toMatch(/content-location/i);
    expect(await run.text()).toContain("Hello from the graph.");

    const threads = await studio(s, "/threads/search", { limit: 10, offset: 0, metadata: { graph_id: "agent" } });
    expect(threads.status).toBe(200);
    expect(((await threads.json()) as Array<{ thread_id: string }>).map((t) => t.thread_id)).toContain(id);
    const history = await studio(s, `/threads/${id}/history`, { limit: 10 });
    expect(history.status).toBe(200);
    const [head] = (await history.json()) as Array<{ values: { messages: Array<{ content: string }> } }>;
    expect(head!.values.messages.map((m) => m.content)).toEqual(["hi", "Hello from the graph."]);
  });
});

describe("the browser rules stand for everyone else", () => {
  it("without CORS_ORIGINS, Studio's origin is 403 and gets no private-network answer", async () => {
    const pre = await preflight(plain, "/assistants/search");
    expect(pre.status).toBe(403);
    expect(pre.headers.get("access-control-allow-private-network")).toBeNull();
    expect((await studio(plain, "/assistants/search", { limit: 10 })).status).toBe(403);
  });

  it("text/plain bodies stay 415 outside /langgraph, and from no origin at all", async () => {
    const own = await fetch(`${s.server.url}/threads/${threadId("tp")}/runs`, { method: "POST", headers: { Origin: STUDIO, "Content-Type": "text/plain" }, body: '{"message":"hi"}' });
    expect(own.status).toBe(415);
    const bare = await fetch(`${s.server.url}/langgraph/assistants/search`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "{}" });
    expect(bare.status).toBe(415);
  });
});

type Sse = Array<{ type: string; data: any }>;
type State = { values: { messages: Array<{ type: string; content: string; tool_calls?: Array<{ id: string; args: Record<string, unknown> }> }> }; next: string[]; checkpoint: { checkpoint_id: string } | null; parent_checkpoint: { checkpoint_id: string } | null };

/** Studio's requests as `key`'s holder, against the stack with auth. */
const as = (key: string) => (path: string, body?: unknown) =>
  fetch(`${authed.server.url}/langgraph${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { Origin: STUDIO, "x-api-key": key, ...(body === undefined ? {} : { "Content-Type": "text/plain;charset=UTF-8" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const alice = as("tok-alice-0001");
const bob = as("tok-bob-000001");
const ops = as("tok-ops-000001");

const json = async <T = any>(res: Response | Promise<Response>, status = 200): Promise<T> => {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
};
/** A run streamed to its end: its frames. */
const streamed = async (req: (path: string, body?: unknown) => Promise<Response>, id: string, body: Record<string, unknown>): Promise<Sse> => {
  const r = await req(`/threads/${id}/runs/stream`, { assistant_id: "agent", stream_mode: ["values"], ...body });
  const text = await r.text();
  expect(r.status, text).toBe(200);
  return parseSse(text);
};
const say = (id: string, content: string, more: Record<string, unknown> = {}) => streamed(alice, id, { input: { messages: [{ type: "human", content }] }, ...more });
const approve = (id: string) => streamed(ops, id, { command: { resume: { decisions: [{ type: "approve" }] } } });
const head = (id: string) => json<State>(alice(`/threads/${id}/state`));
const refunds = (callId: string) => authed.db.rows("refunds", "call_id = ?", callId).length;
const REFUND = { order_id: "A-1001", amount_cents: 100, reason: "late" };

/**
 * A thread where the model said hello (`before`), asked for a refund that waited at the gate
 * (`waiting`), which an approver approved and which ran (`after`, the head).
 */
async function refundedThread(label: string, callId: string) {
  const id = threadId(label);
  await json(alice("/threads", { thread_id: id }));
  authed.model.push({ text: "Hello." });
  await say(id, "hi");
  const before = (await head(id)).checkpoint!.checkpoint_id;
  authed.model.push({ toolCalls: [{ id: callId, name: "refund_order", args: REFUND }] });
  await say(id, "refund my order");
  const waiting = (await head(id)).checkpoint!.checkpoint_id;
  authed.model.push({ text: "Refunded." });
  await approve(id);
  expect(refunds(callId)).toBe(1);
  const after = (await head(id)).checkpoint!.checkpoint_id;
  return { id, before, waiting, after };
}

describe("Studio's time travel: the state at a checkpoint", () => {
  it("reads any checkpoint of the thread by id (GET) or by config (POST), masked; an unknown one or someone else's thread is 404", async () => {
    const id = threadId("studio-at");
    await json(alice("/threads", { thread_id: id }));
    authed.model.push({ toolCalls: [{ id: "at-mail", name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "secret words" } }] });
    await say(id, "mail eve");
    const waiting = await head(id);
    authed.model.push({ text: "Not sent." });
    await streamed(ops, id, { command: { resume: { decisions: [{ type: "reject", message: "no" }] } } });
    const now = await head(id);
    expect(now.checkpoint!.checkpoint_id).not.toBe(waiting.checkpoint!.checkpoint_id);

    const cp = waiting.checkpoint!.checkpoint_id;
    const byId = await json<State>(alice(`/threads/${id}/state/${cp}`));
    const byConfig = await json<State>(alice(`/threads/${id}/state/checkpoint`, { checkpoint: { checkpoint_id: cp, checkpoint_ns: "" }, subgraphs: true }));
    expect(byConfig).toEqual(byId);
    expect(byId.checkpoint).toMatchObject({ thread_id: id, checkpoint_ns: "", checkpoint_id: cp });
    expect(byId.parent_checkpoint?.checkpoint_id).toBe(waiting.parent_checkpoint?.checkpoint_id);
    expect(byId.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(byId.values.messages[1]!.tool_calls![0]!.args).toMatchObject({ to: "***", body: "***" });
    for (const hidden of ["eve@example.com", "secret words"]) expect(JSON.stringify(byId)).not.toContain(hidden);
    // The head by its id is the head.
    expect(await json(alice(`/threads/${id}/state/${now.checkpoint!.checkpoint_id}`))).toEqual(now);

    const missing = await json(alice(`/threads/${id}/state/1f000000-0000-6000-8000-000000000000`), 404);
    expect(missing).toMatchObject({ error: { code: "not_found" } });
    await json(alice(`/threads/${id}/state/checkpoint`, { checkpoint: { checkpoint_id: "1f000000-0000-6000-8000-000000000000" } }), 404);
    // Someone else's thread answers as a thread that does not exist.
    const nobody = await json(alice(`/threads/${threadId("nobody")}/state/${cp}`), 404);
    expect(await json(bob(`/threads/${id}/state/${cp}`), 404)).toEqual({ ...nobody, error: { ...(nobody as any).error, message: expect.any(String) } });
    await json(bob(`/threads/${id}/state/checkpoint`, { checkpoint: { checkpoint_id: cp } }), 404);
  });
});

describe("Studio's store panel", () => {
  it("lists an empty store, to callers with a token only", async () => {
    expect(await json(alice("/store/namespaces", { limit: 100, offset: 0 }))).toEqual({ namespaces: [] });
    expect(await json(alice("/store/namespaces", {}))).toEqual({ namespaces: [] });
    expect(await json(alice("/store/items/search", { namespace_prefix: ["memories"], limit: 10 }))).toEqual({ items: [] });
    await json(alice("/store/namespaces", { limit: -1 }), 400);
    const anon = await fetch(`${authed.server.url}/langgraph/store/namespaces`, { method: "POST", headers: { Origin: STUDIO, "Content-Type": "text/plain" }, body: "{}" });
    expect(anon.status).toBe(401);
  });
});

describe("Studio's debug stream", () => {
  it("begins with metadata, and each checkpoint names itself and its parent, masked", async () => {
    const id = threadId("studio-debug");
    await json(alice("/threads", { thread_id: id }));
    authed.model.push({ text: "Hello." });
    await say(id, "hi");
    const start = (await head(id)).checkpoint!;
    authed.model.push({ toolCalls: [{ id: "debug-mail", name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "secret words" } }] });
    const r = await alice(`/threads/${id}/runs/stream`, { assistant_id: "agent", input: { messages: [{ type: "human", content: "mail eve" }] }, stream_mode: ["debug"] });
    const text = await r.text();
    expect(r.status).toBe(200);
    const frames = parseSse(text);
    expect(frames[0]).toEqual({ type: "metadata", data: { run_id: expect.any(String), attempt: 1 } });
    const checkpoints = frames.filter((f) => f.type === "debug" && f.data.type === "checkpoint").map((f) => f.data.payload);
    expect(checkpoints.length).toBeGreaterThan(1);
    for (const c of checkpoints) {
      // As langgraph-api names them: from the step's config, and its parent's (null when there is none).
      expect(c.checkpoint).toEqual({ thread_id: id, checkpoint_ns: "", checkpoint_map: null, ...(c.config.configurable.checkpoint_id ? { checkpoint_id: c.config.configurable.checkpoint_id } : {}) });
      expect(c).not.toHaveProperty("parentConfig");
      expect(c).toHaveProperty("parent_checkpoint");
      if (c.parent_config) expect(c.parent_checkpoint).toMatchObject({ thread_id: id, checkpoint_ns: "", checkpoint_id: c.parent_config.configurable.checkpoint_id });
      else expect(c.parent_checkpoint).toBeNull();
    }
    // The run's first step goes on from a checkpoint the thread has saved, which Studio can open.
    const parent = checkpoints[0].parent_checkpoint as { checkpoint_id: string };
    expect(parent).toMatchObject({ thread_id: id, checkpoint_id: expect.any(String) });
    expect((await json<State>(alice(`/threads/${id}/state/${parent.checkpoint_id}`))).checkpoint?.checkpoint_id).toBe(parent.checkpoint_id);
    expect(start.checkpoint_id).toBeTruthy();
    for (const hidden of ["eve@example.com", "secret words"]) expect(text).not.toContain(hidden);
  });
});

describe("Studio's re-run from here: a state write that copies a checkpoint", () => {
  it("copies a checkpoint that holds every settled call; one before it is 422, any other write 403, someone else's thread 404", async () => {
    const { id, before, waiting, after } = await refundedThread("studio-copy-at", "copy-at-refund");
    const was = await head(id);
    const copied = await json<{ checkpoint: { thread_id: string; checkpoint_id: string } }>(alice(`/threads/${id}/state`, { values: null, as_node: "__copy__", checkpoint_id: after }));
    expect(copied.checkpoint).toMatchObject({ thread_id: id, checkpoint_id: expect.any(String) });
    expect(copied.checkpoint.checkpoint_id).not.toBe(after);
    const now = await head(id);
    expect(now.checkpoint!.checkpoint_id).toBe(copied.checkpoint.checkpoint_id);
    expect(now.values).toEqual(was.values);
    // The SDK's spelling: the checkpoint as a config.
    await json(alice(`/threads/${id}/state`, { as_node: "__copy__", checkpoint: { checkpoint_id: after, checkpoint_ns: "" } }));

    for (const cp of [before, waiting]) {
      expect(await json(alice(`/threads/${id}/state`, { as_node: "__copy__", checkpoint_id: cp }), 422)).toMatchObject({ error: { code: "unsupported" } });
    }
    await json(alice(`/threads/${id}/state`, { as_node: "__copy__", checkpoint_id: "1f000000-0000-6000-8000-000000000000" }), 404);
    for (const write of [
      { values: { messages: [] } },
      { values: { messages: [] }, as_node: "__copy__", checkpoint_id: after },
      { as_node: "agent", checkpoint_id: after },
      { as_node: "__copy__" },
      { as_node: "__copy__", checkpoint: { checkpoint_id: after, checkpoint_ns: "tools:1" } },
      { as_node: "__copy__", checkpoint_id: 7 },
    ]) {
      expect(await json(alice(`/threads/${id}/state`, write), 403)).toMatchObject({ error: { code: "state_locked" } });
    }
    await json(bob(`/threads/${id}/state`, { as_node: "__copy__", checkpoint_id: after }), 404);
    // Nothing ran again, and the refused writes moved nothing.
    authed.model.push({ text: "Anything else?" });
    await say(id, "thanks");
    expect(refunds("copy-at-refund")).toBe(1);
  });
});

describe("Studio's copy of a thread", () => {
  it("copies the thread for its owner; what was settled on it is settled on the copy, and never runs there", async () => {
    const { id, before, waiting, after } = await refundedThread("studio-copy", "copy-refund");
    const original = await head(id);
    const copy = await json<{ thread_id: string; metadata: Record<string, unknown>; status: string; values: unknown }>(alice(`/threads/${id}/copy`, {}));
    expect(copy.thread_id).not.toBe(id);
    expect(copy).toMatchObject({ status: "idle", metadata: { graph_id: "agent" }, values: original.values });
    const c = copy.thread_id;
    expect((await json<State>(alice(`/threads/${c}/state/${after}`))).values).toEqual(original.values);
    // Not someone else's to copy, nor to see copied.
    await json(bob(`/threads/${id}/copy`, {}), 404);
    await json(bob(`/threads/${c}`), 404);

    // Every way back to the refund on the copy: a fork from before it, from where it waited, a
    // "re-run from here" there, a resume.
    for (const cp of [before, waiting]) {
      const r = await alice(`/threads/${c}/runs/stream`, { assistant_id: "agent", input: { messages: [{ type: "human", content: "refund it again" }] }, checkpoint: { checkpoint_id: cp } });
      expect(r.status, await r.text()).toBe(422);
      await json(alice(`/threads/${c}/state`, { as_node: "__copy__", checkpoint_id: cp }), 422);
    }
    expect((await ops(`/threads/${c}/runs/stream`, { assistant_id: "agent", command: { resume: { decisions: [{ type: "approve" }] } } })).status).toBe(409);
    // The model asks for the same call again on the copy: it is a new call, with an id of its own, waiting for its own decision.
    authed.model.push({ toolCalls: [{ id: "copy-refund", name: "refund_order", args: REFUND }] });
    const again = await say(c, "refund my order again");
    const asked = again.find((f) => f.type === "values" && "__interrupt__" in f.data)!.data.__interrupt__[0].value.tollgate.calls[0].call_id as string;
    expect(asked).not.toBe("copy-refund");
    authed.model.push({ text: "Not refunded." });
    await streamed(ops, c, { command: { resume: { decisions: [{ type: "reject", message: "already refunded" }] } } });
    // The refund ran once, on the original, and nothing else ran anywhere.
    expect(refunds("copy-refund")).toBe(1);
    expect(refunds(asked)).toBe(0);
  });

  it("copies only an idle thread: one waiting on a decision is 409", async () => {
    const id = threadId("studio-copy-waiting");
    await json(alice("/threads", { thread_id: id }));
    authed.model.push({ toolCalls: [{ id: "copy-wait", name: "refund_order", args: REFUND }] });
    await say(id, "refund my order");
    expect(await json(alice(`/threads/${id}/copy`, {}), 409)).toMatchObject({ error: { code: "awaiting_approval" } });
    await json(alice(`/threads/${threadId("nobody")}/copy`, {}), 404);
  });
});
