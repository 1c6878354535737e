import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse, type SseMessage } from "../../src/client/sse-reader.js";
import { EVENT_TYPES, type EventType } from "../../src/protocol/index.js";
import { LANGGRAPH_OPENAPI } from "../../src/faces/langgraph/index.js";
import { buildOpenApiDocument } from "../../src/faces/api/openapi.js";
import { schemaChecker } from "../helpers/openapi-validator.js";
import { call, expectNoStackTraces, type Stack, startStack, threadId } from "./support.js";

/** Responses of a real server checked against the document it serves, not against the code's schemas. */
const TOKEN = "tok-openapi-alice";
const AUTH = { authorization: `Bearer ${TOKEN}` };
let s: Stack;
let doc: any;

beforeAll(async () => {
  s = await startStack({ AUTH_TOKENS: JSON.stringify({ [TOKEN]: { sub: "alice", roles: ["user"] } }) });
  const res = await fetch(`${s.server.url}/openapi.json`); // no token: the document is public
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = await res.json();
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

/** The documented response for this status; its JSON body, when it has one, must fit its schema. */
function expectDocumented(method: string, path: string, status: number, body?: unknown): void {
  const response = doc.paths[path]?.[method]?.responses?.[String(status)];
  expect(response, `${method.toUpperCase()} ${path} → ${status} is not in the document`).toBeDefined();
  if (body === undefined) return;
  const schema = response.content?.["application/json"]?.schema;
  expect(schema, `${method} ${path} ${status} has no JSON schema`).toBeDefined();
  expect(schemaChecker(doc, schema)(body), JSON.stringify(body).slice(0, 300)).toBeNull();
  const codes: string[] | undefined = response["x-error-codes"];
  if (codes) expect(codes).toContain((body as { error: { code: string } }).error.code);
}

/** Every frame's `data` fits the document's schema for its `event:` type, and its id is `<run_id>:<seq>`. */
function expectEventsDocumented(frames: SseMessage[]): EventType[] {
  const seen: EventType[] = [];
  const firstSeq = Number(frames[0]?.id?.split(":").at(-1));
  frames.forEach((f, i) => {
    expect(EVENT_TYPES).toContain(f.event);
    const data = JSON.parse(f.data);
    expect(f.id).toBe(`${data.run_id}:${firstSeq + i}`);
    expect(schemaChecker(doc, doc["x-sse-events"][f.event!])(data), `${f.event} ${f.data.slice(0, 200)}`).toBeNull();
    seen.push(f.event as EventType);
  });
  return seen;
}

async function sse(path: string, body: unknown, extra: Record<string, string> = {}) {
  const res = await fetch(s.server.url + path, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json", accept: "text/event-stream", ...extra },
    body: JSON.stringify(body),
  });
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const frames: SseMessage[] = [];
  for await (const m of readSse(res.body!)) frames.push(m);
  return { status: res.status, frames };
}

describe("GET /openapi.json", () => {
  it("is what the code generates, served without a token, still behind the cross-site check", async () => {
    expect(doc).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(LANGGRAPH_OPENAPI))));
    const crossSite = await call(s.server.url, "GET", "/openapi.json", undefined, { origin: "http://evil.example" });
    expect(crossSite.json.error?.code).toBe("forbidden_origin");
    expectDocumented("get", "/openapi.json", crossSite.status, crossSite.json);
  });
});

describe("real responses fit the served document", () => {
  it("threads, runs, every event of a gated run, the resume, audit, inbox and errors", async () => {
    const id = threadId("openapi");
    const created = await call(s.server.url, "POST", "/threads", { thread_id: id, metadata: { team: "support" } }, AUTH);
    expectDocumented("post", "/threads", created.status, created.json);
    expect(created.status).toBe(201);
    const again = await call(s.server.url, "POST", "/threads", { thread_id: id }, AUTH);
    expect(again.status).toBe(409);
    expectDocumented("post", "/threads", again.status, again.json);
    const noToken = await call(s.server.url, "GET", `/threads/${id}`);
    expect(noToken.status).toBe(401);
    expectDocumented("get", "/threads/{thread_id}", 401, noToken.json);
    const missing = await call(s.server.url, "GET", "/threads/nobody-here", undefined, AUTH);
    expectDocumented("get", "/threads/{thread_id}", missing.status, missing.json);

    // token, tool_call (read-only and irreversible), tool_result, interrupt
    s.model.push({
      text: "Let me check.",
      toolCalls: [
        { id: "oa-1", name: "lookup_order", args: { order_id: "A-1001" } },
        { id: "oa-2", name: "send_email", args: { to: "ada@example.com", subject: "Hello", body: "Your order ships." } },
      ],
    });
    const run = await sse(`/threads/${id}/runs`, { message: "email the customer of A-1001" });
    expectDocumented("post", "/threads/{thread_id}/runs", run.status);
    const first = expectEventsDocumented(run.frames);
    expect(new Set(first)).toEqual(new Set(["token", "tool_call", "tool_result", "interrupt"]));
    const interrupt = JSON.parse(run.frames.at(-1)!.data);

    const view = await call(s.server.url, "GET", `/threads/${id}`, undefined, AUTH);
    expectDocumented("get", "/threads/{thread_id}", view.status, view.json);
    expect(view.json.pending.interrupt_id).toBe(interrupt.interrupt_id);
    const inbox = await call(s.server.url, "GET", "/approvals", undefined, AUTH);
    expectDocumented("get", "/approvals", inbox.status, inbox.json);
    expect(inbox.json.items.map((i: { thread_id: string }) => i.thread_id)).toContain(id);
    const busy = await call(s.server.url, "POST", `/threads/${id}/runs`, { message: "more" }, AUTH);
    expectDocumented("post", "/threads/{thread_id}/runs", busy.status, busy.json);
    const unknown = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: interrupt.interrupt_id, decisions: [{ call_id: "nope", approved: true }] }, AUTH);
    expect(unknown.status).toBe(422);
    expectDocumented("post", "/threads/{thread_id}/resume", unknown.status, unknown.json);

    // The resume's stream: tool_result of the approved call, token, done.
    s.model.push({ text: "Sent." });
    const resumed = await sse(`/threads/${id}/resume`, { interrupt_id: interrupt.interrupt_id, decisions: [{ call_id: "oa-2", approved: true }] });
    expectDocumented("post", "/threads/{thread_id}/resume", resumed.status);
    expect(expectEventsDocumented(resumed.frames)).toEqual(["tool_result", "token", "done"]);

    const audit = await call(s.server.url, "GET", `/threads/${id}/audit`, undefined, AUTH);
    expectDocumented("get", "/threads/{thread_id}/audit", audit.status, audit.json);
    expect(audit.json.entries[0]).toMatchObject({ decision: "approved", executed: { status: "ok" } });
    const list = await call(s.server.url, "GET", "/threads?limit=1", undefined, AUTH);
    expectDocumented("get", "/threads", list.status, list.json);
    const me = await call(s.server.url, "GET", "/me", undefined, AUTH);
    expectDocumented("get", "/me", me.status, me.json);
    const health = await call(s.server.url, "GET", "/healthz");
    expectDocumented("get", "/healthz", health.status, health.json);

    // A replay of the whole latest run, by GET …/stream.
    const replay = await fetch(`${s.server.url}/threads/${id}/stream`, { headers: AUTH });
    expectDocumented("get", "/threads/{thread_id}/stream", replay.status);
    const frames: SseMessage[] = [];
    for await (const m of readSse(replay.body!)) frames.push(m);
    expect(expectEventsDocumented(frames)).toEqual(["tool_result", "token", "done"]);
    const nothingLeft = await fetch(`${s.server.url}/threads/${id}/stream`, { headers: { ...AUTH, "last-event-id": frames.at(-1)!.id! } });
    expectDocumented("get", "/threads/{thread_id}/stream", nothingLeft.status);
    expect(nothingLeft.status).toBe(204);
  });

  it("the error and cancelled events, a detached resume's 202 and the cancel result", async () => {
    const id = threadId("openapi-end");
    s.model.push({ status: 500 });
    const failed = await sse(`/threads/${id}/runs`, { message: "hello" });
    expect(expectEventsDocumented(failed.frames).at(-1)).toBe("error");

    s.model.push({ toolCalls: [{ id: "oa-3", name: "send_email", args: { to: "bo@example.com", subject: "Hi", body: "x" } }] });
    const gated = await sse(`/threads/${id}/runs`, { message: "email bo" });
    const interruptId = JSON.parse(gated.frames.at(-1)!.data).interrupt_id;
    s.model.push({ hang: true, text: "thinking" });
    const detached = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: interruptId, decisions: [] }, AUTH);
    expect(detached.status).toBe(202);
    expectDocumented("post", "/threads/{thread_id}/resume", detached.status, detached.json);
    await s.model.nextRequest(); // the continuation is now waiting on the model
    const follow = fetch(`${s.server.url}/threads/${id}/stream`, { headers: AUTH });
    const cancel = await call(s.server.url, "POST", `/threads/${id}/cancel`, undefined, AUTH);
    expectDocumented("post", "/threads/{thread_id}/cancel", cancel.status, cancel.json);
    expect(cancel.json.cancelled).toBe(true);
    const frames: SseMessage[] = [];
    for await (const m of readSse((await follow).body!)) frames.push(m);
    expect(expectEventsDocumented(frames).at(-1)).toBe("cancelled");
  });
});
