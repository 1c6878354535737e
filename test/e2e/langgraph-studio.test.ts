/**
 * LangGraph Studio is hosted (smith.langchain.com) and cannot be reached offline, so its connect
 * sequence is replayed as its browser sends it: Chrome's private-network preflight, then `/info`,
 * assistants, the graph and its schemas, thread search and history, with JSON bodies labelled
 * `text/plain`, from Studio's origin. Allowed only when that origin is in CORS_ORIGINS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectNoStackTraces, type Stack, startStack, threadId } from "./support.js";

const STUDIO = "https://smith.langchain.com";
let s: Stack;
let plain: Stack;
beforeAll(async () => {
  [s, plain] = await Promise.all([startStack({ CORS_ORIGINS: STUDIO }), startStack()]);
});
afterAll(async () => {
  for (const x of [s, plain]) expectNoStackTraces(x.server);
  await Promise.all([s?.stop(), plain?.stop()]);
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
