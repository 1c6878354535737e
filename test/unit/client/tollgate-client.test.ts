import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { backoffDelay, DEFAULT_RECONNECT, TollgateClient, TollgateError } from "../../../src/client/index.js";
import { framesOf, scriptedRun, sendJsonError, sseHead, startServer, write, type TestServer } from "./http-fixture.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

describe("JSON endpoints", () => {
  it("sends each call to its method and path, and returns the body", async () => {
    server = await startServer((req, res) => {
      const key = `${req.method} ${req.path}`;
      if (key === "POST /threads") return json(res, 201, { thread_id: "t1", status: "idle" });
      if (key === "GET /threads/t1")
        return json(res, 200, { thread_id: "t1", status: "idle", last_outcome: null, messages: [], pending: null });
      if (key === "POST /threads/t1/cancel") return json(res, 200, { thread_id: "t1", cancelled: false, status: "idle" });
      if (key === "GET /healthz") return json(res, 200, { ok: true });
      if (key === "POST /threads/t1/resume") {
        const wantsStream = (req.headers.accept ?? "").includes("text/event-stream");
        return wantsStream ? sendJsonError(res, 500, "internal_error") : json(res, 202, { run_id: "r9" });
      }
      sendJsonError(res, 404, "not_found");
    });
    const client = new TollgateClient({ baseUrl: `${server.baseUrl}/` });

    expect(await client.createThread({ thread_id: "t1", metadata: { a: 1 } })).toEqual({ thread_id: "t1", status: "idle" });
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ thread_id: "t1", metadata: { a: 1 } });
    expect(server.requests[0]!.headers["content-type"]).toBe("application/json");
    expect((await client.getThread("t1")).last_outcome).toBeNull();
    expect(await client.cancel("t1")).toEqual({ thread_id: "t1", cancelled: false, status: "idle" });
    expect(await client.health()).toEqual({ ok: true });
    const decisions = [{ call_id: "c1", approved: false, reason: "no" }];
    expect(await client.resumeDetached("t1", "i1", { decisions })).toEqual({ run_id: "r9" });
    expect(JSON.parse(server.requests.at(-1)!.body)).toEqual({ interrupt_id: "i1", decisions });
  });

  it("rejects with the contract's error code, message and status", async () => {
    server = await startServer((_req, res) => sendJsonError(res, 409, "thread_exists", "thread t1 exists"));
    const err = await new TollgateClient({ baseUrl: server.baseUrl }).createThread({ thread_id: "t1" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect(err).toMatchObject({ code: "thread_exists", status: 409, message: "thread t1 exists" });
  });

  it("reports an error page that is not the contract's JSON as http_error", async () => {
    server = await startServer((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<h1>Bad Gateway</h1>");
    });
    await expect(new TollgateClient({ baseUrl: server.baseUrl }).health()).rejects.toMatchObject({
      code: "http_error",
      status: 502,
    });
  });

  it("reports an unreachable server as network_error", async () => {
    const gone = await startServer((_req, res) => void res.end());
    await gone.close();
    await expect(new TollgateClient({ baseUrl: gone.baseUrl }).health()).rejects.toMatchObject({
      code: "network_error",
      status: 0,
    });
  });

  it("uses the fetch it is given", async () => {
    server = await startServer((_req, res) => json(res, 200, { ok: true }));
    const urls: string[] = [];
    const client = new TollgateClient({
      baseUrl: server.baseUrl,
      fetch: (input, init) => {
        urls.push(String(input));
        return fetch(input, init);
      },
    });
    await client.health();
    expect(urls).toEqual([`${server.baseUrl}/healthz`]);
  });
});

describe("streaming endpoints", () => {
  it("run() posts the message as JSON, asks for SSE and yields typed events", async () => {
    const events = scriptedRun("r1", 4);
    server = await startServer(async (_req, res) => {
      sseHead(res);
      for (const f of framesOf(events)) await write(res, f);
      res.end();
    });
    const stream = new TollgateClient({ baseUrl: server.baseUrl }).run("t1", "refund A-1001", { on_disconnect: "continue" });
    expect(await stream.collect()).toEqual(events);
    expect(stream.lastEventId).toBe("r1:3");
    const [req] = server.requests;
    expect(`${req!.method} ${req!.path}`).toBe("POST /threads/t1/runs");
    expect(req!.headers.accept).toBe("text/event-stream");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req!.body)).toEqual({ message: "refund A-1001", on_disconnect: "continue" });
  });

  it("resume() posts the decisions with Accept: text/event-stream", async () => {
    const events = scriptedRun("r2", 2);
    server = await startServer(async (_req, res) => {
      sseHead(res);
      for (const f of framesOf(events)) await write(res, f);
      res.end();
    });
    const decisions = [{ call_id: "c1", approved: true }];
    expect(await new TollgateClient({ baseUrl: server.baseUrl }).resume("t1", "i1", { decisions }).collect()).toEqual(events);
    const [req] = server.requests;
    expect(`${req!.method} ${req!.path}`).toBe("POST /threads/t1/resume");
    expect(req!.headers.accept).toBe("text/event-stream");
    expect(JSON.parse(req!.body)).toEqual({ interrupt_id: "i1", decisions });
  });

  it.each([
    [409, "thread_busy"],
    [409, "awaiting_approval"],
    [400, "invalid_request"],
  ])("an error answer to the POST (%i %s) makes the first next() throw, with no retry", async (status, code) => {
    server = await startServer((_req, res) => sendJsonError(res, status, code, `because ${code}`));
    const iterator = new TollgateClient({ baseUrl: server.baseUrl }).run("t1", "hi")[Symbol.asyncIterator]();
    const err = await iterator.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect(err).toMatchObject({ code, status, message: `because ${code}` });
    expect(server.requests).toHaveLength(1);
  });
});

describe("backoff", () => {
  it("doubles from baseDelayMs up to maxDelayMs", () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, DEFAULT_RECONNECT))).toEqual([100, 200, 400, 800, 1600, 2000, 2000]);
    expect(DEFAULT_RECONNECT.retries).toBe(5);
  });
});

describe("identity: bearer token", () => {
  const FAST = { retries: 5, baseDelayMs: 1, maxDelayMs: 5 };

  /** Answers every JSON call of the client with a plausible body; SSE requests get a 2-event run. */
  function everything(req: { method: string; path: string; headers: Record<string, unknown> }, res: ServerResponse): void | Promise<void> {
    const path = req.path.split("?")[0];
    const key = `${req.method} ${path}`;
    if (String(req.headers.accept).includes("text/event-stream")) {
      return (async () => {
        sseHead(res);
        for (const f of framesOf(scriptedRun("r1", 2))) await write(res, f);
        res.end();
      })();
    }
    if (key === "GET /me") return json(res, 200, { sub: "alice", roles: ["user"] });
    if (key === "GET /threads") return json(res, 200, { items: [], next_cursor: null });
    if (key === "POST /threads") return json(res, 201, { thread_id: "t1", status: "idle" });
    if (key === "GET /threads/t1")
      return json(res, 200, { thread_id: "t1", status: "idle", owner: "alice", last_outcome: null, messages: [], pending: null });
    if (key === "GET /threads/t1/audit") return json(res, 200, { thread_id: "t1", entries: [] });
    if (key === "GET /approvals") return json(res, 200, { items: [] });
    if (key === "POST /threads/t1/cancel") return json(res, 200, { thread_id: "t1", cancelled: false, status: "idle" });
    if (key === "POST /threads/t1/resume") return json(res, 202, { run_id: "r9" });
    if (key === "GET /healthz") return json(res, 200, { ok: true });
    sendJsonError(res, 404, "not_found");
  }

  /** Every call of the client once: JSON ones, the two stream-starting POSTs and a follow. */
  async function callEverything(client: TollgateClient): Promise<void> {
    await client.me();
    await client.listThreads({ limit: 2 });
    await client.createThread({ thread_id: "t1" });
    await client.getThread("t1");
    await client.audit("t1");
    await client.approvals();
    await client.cancel("t1");
    await client.resumeDetached("t1", "i1", { decisions: [{ call_id: "c1", approved: true }] });
    await client.health();
    await client.run("t1", "hi").collect();
    await client.resume("t1", "i1", { decisions: [{ call_id: "c1", approved: true }] }).collect();
    await client.stream("t1").collect();
  }

  const EVERY_REQUEST = [
    "GET /me",
    "GET /threads?limit=2",
    "POST /threads",
    "GET /threads/t1",
    "GET /threads/t1/audit",
    "GET /approvals",
    "POST /threads/t1/cancel",
    "POST /threads/t1/resume",
    "GET /healthz",
    "POST /threads/t1/runs",
    "POST /threads/t1/resume",
    "GET /threads/t1/stream",
  ];

  it("sends Authorization: Bearer <token> on every JSON call, stream-starting POST and follow GET", async () => {
    server = await startServer(everything);
    await callEverything(new TollgateClient({ baseUrl: server.baseUrl, token: "tok-1" }));
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(EVERY_REQUEST);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(EVERY_REQUEST.map(() => "Bearer tok-1"));
  });

  it.each([
    ["no token option", undefined],
    ["an empty token", ""],
    ["a token function giving undefined", () => undefined],
    ["an async token function giving undefined", async () => undefined],
  ])("sends no Authorization header at all with %s", async (_label, token) => {
    server = await startServer(everything);
    await callEverything(new TollgateClient({ baseUrl: server.baseUrl, token }));
    expect(server.requests).toHaveLength(EVERY_REQUEST.length);
    for (const req of server.requests) expect(Object.keys(req.headers)).not.toContain("authorization");
  });

  it("calls a token function per request: a swapped token is used from the next call on", async () => {
    server = await startServer(everything);
    let current: string | undefined = "first";
    let calls = 0;
    const client = new TollgateClient({
      baseUrl: server.baseUrl,
      token: async () => {
        calls++;
        return current;
      },
    });
    await client.me();
    current = "second";
    await client.approvals();
    current = undefined; // signed out
    await client.health();
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(["Bearer first", "Bearer second", undefined]);
    expect(calls).toBe(3);
  });

  it("a reconnect after a drop asks for the token again and sends it on the follow GET", async () => {
    const events = scriptedRun("r1", 5);
    const frames = framesOf(events);
    let post: ServerResponse | undefined;
    server = await startServer(async (req, res) => {
      sseHead(res);
      if (req.method === "POST") {
        post = res;
        for (const f of frames.slice(0, 2)) await write(res, f);
        return; // held open until the test cuts it
      }
      for (const f of frames.slice(2)) await write(res, f);
      res.end();
    });
    let token = "before-refresh";
    const client = new TollgateClient({ baseUrl: server.baseUrl, token: () => token, reconnect: FAST });
    const iterator = client.run("t1", "hi")[Symbol.asyncIterator]();
    const head = [(await iterator.next()).value, (await iterator.next()).value];
    token = "after-refresh";
    post!.destroy();
    const tail: unknown[] = [];
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) tail.push(step.value);

    expect([...head, ...tail]).toEqual(events);
    expect(server.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization}`)).toEqual([
      "POST /threads/t1/runs Bearer before-refresh",
      "GET /threads/t1/stream Bearer after-refresh",
    ]);
    expect(server.requests[1]!.headers["last-event-id"]).toBe("r1:1");
  });

  it("a token function that throws rejects a JSON call with its own error, sending nothing", async () => {
    server = await startServer(everything);
    const boom = new Error("token refresh failed");
    const client = new TollgateClient({
      baseUrl: server.baseUrl,
      token: () => {
        throw boom;
      },
    });
    await expect(client.me()).rejects.toBe(boom);
    expect(server.requests).toHaveLength(0);
  });

  it("a token function that throws ends a run's stream with network_error (cause kept), posting nothing", async () => {
    server = await startServer(everything);
    const boom = new Error("token refresh failed");
    const client = new TollgateClient({ baseUrl: server.baseUrl, token: () => Promise.reject(boom), reconnect: FAST });
    const err = await client.run("t1", "hi").collect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect(err).toMatchObject({ code: "network_error", cause: boom });
    expect(server.requests).toHaveLength(0);
  });
});

describe("identity endpoints", () => {
  it("me(), approvals() and audit() GET their paths and return the parsed bodies", async () => {
    const me = { sub: "alice", roles: ["approver", "user"] };
    const approvals = {
      items: [
        {
          thread_id: "t 1",
          interrupt_id: "i1",
          calls: [{ call_id: "c1", name: "issue_refund", args: { order_id: "A-1001", amount: 12.5 }, editable: true }],
          expires_at: "2030-01-01T00:00:00.000Z",
          requested_by: "bob",
        },
      ],
    };
    const audit = {
      thread_id: "t 1",
      entries: [
        {
          at: "2030-01-01T00:00:00.000Z",
          interrupt_id: "i1",
          call_id: "c1",
          tool: "issue_refund",
          args_hash: "h1",
          decision: "edited",
          by: "alice",
          reason: null,
          edited_args_hash: "h2",
          executed: { status: "ok", at: "2030-01-01T00:00:01.000Z" },
        },
      ],
    };
    server = await startServer((req, res) => {
      const key = `${req.method} ${req.path}`;
      if (key === "GET /me") return json(res, 200, me);
      if (key === "GET /approvals") return json(res, 200, approvals);
      if (key === "GET /threads/t%201/audit") return json(res, 200, audit);
      sendJsonError(res, 404, "not_found");
    });
    const client = new TollgateClient({ baseUrl: server.baseUrl, token: "tok" });
    expect(await client.me()).toEqual(me);
    expect(await client.approvals()).toEqual(approvals);
    expect(await client.audit("t 1")).toEqual(audit);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /me", "GET /approvals", "GET /threads/t%201/audit"]);
    expect(server.requests.map((r) => r.headers.accept)).toEqual(["application/json", "application/json", "application/json"]);
  });

  it("listThreads() builds its query from the options given, omitting absent ones, and returns the page", async () => {
    const page = {
      items: [
        {
          thread_id: "t1",
          status: "idle",
          last_outcome: "completed",
          created_at: "2030-01-01T00:00:00.000Z",
          updated_at: "2030-01-01T00:00:05.000Z",
          title: "refund A-1001",
        },
      ],
      next_cursor: "eyJ0IjoxfQ==/+&x",
    };
    server = await startServer((req, res) =>
      req.method === "GET" && req.path.split("?")[0] === "/threads" ? json(res, 200, page) : sendJsonError(res, 404, "not_found"),
    );
    const client = new TollgateClient({ baseUrl: server.baseUrl });

    expect(await client.listThreads()).toEqual(page);
    await client.listThreads({});
    await client.listThreads({ limit: 20 });
    await client.listThreads({ cursor: page.next_cursor });
    await client.listThreads({ limit: 5, cursor: page.next_cursor });
    await client.listThreads({ limit: 5, cursor: null });

    const seen = server.requests.map((r) => new URL(r.path, "http://x"));
    expect(seen.map((u) => u.pathname)).toEqual(Array(6).fill("/threads"));
    expect(seen.map((u) => Object.fromEntries(u.searchParams))).toEqual([
      {},
      {},
      { limit: "20" },
      { cursor: "eyJ0IjoxfQ==/+&x" }, // the cursor survives the query string byte for byte
      { limit: "5", cursor: "eyJ0IjoxfQ==/+&x" },
      { limit: "5" },
    ]);
    expect(server.requests[0]!.path).toBe("/threads"); // no dangling "?"
  });

  it("sends edited_args exactly as given, on resume() and resumeDetached()", async () => {
    server = await startServer(async (req, res) => {
      if (String(req.headers.accept).includes("text/event-stream")) {
        sseHead(res);
        for (const f of framesOf(scriptedRun("r2", 2))) await write(res, f);
        return void res.end();
      }
      json(res, 202, { run_id: "r9" });
    });
    const decisions = [
      {
        call_id: "c1",
        approved: true,
        edited_args: { amount: 0.5, note: "naïve € 🌍", lines: [1, { sku: "X" }], cap: null, nested: { deep: { ok: false } } },
      },
      { call_id: "c2", approved: false, reason: "too much" },
    ];
    const client = new TollgateClient({ baseUrl: server.baseUrl });
    await client.resume("t1", "i1", { decisions }).collect();
    await client.resumeDetached("t1", "i2", { decisions });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /threads/t1/resume", "POST /threads/t1/resume"]);
    expect(JSON.parse(server.requests[0]!.body)).toStrictEqual({ interrupt_id: "i1", decisions });
    expect(JSON.parse(server.requests[1]!.body)).toStrictEqual({ interrupt_id: "i2", decisions });
  });

  it.each([
    [401, "unauthorized"],
    [403, "forbidden"],
  ])("a %i answer rejects a JSON call with code %s", async (status, code) => {
    server = await startServer((_req, res) => sendJsonError(res, status, code, `nope: ${code}`));
    const err = await new TollgateClient({ baseUrl: server.baseUrl, token: "expired" }).me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect(err).toMatchObject({ code, status, message: `nope: ${code}` });
  });

  it("a 401 on stream()'s follow GET ends the stream with unauthorized, with no reconnect", async () => {
    server = await startServer((_req, res) => sendJsonError(res, 401, "unauthorized", "token expired"));
    const client = new TollgateClient({ baseUrl: server.baseUrl, token: "old", reconnect: { retries: 5, baseDelayMs: 1, maxDelayMs: 5 } });
    const err = await client.stream("t1", { lastEventId: "r1:3" }).collect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect(err).toMatchObject({ code: "unauthorized", status: 401, message: "token expired" });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /threads/t1/stream"]);
  });

  it("a 401 on the reconnect after a drop ends the stream with unauthorized instead of retrying", async () => {
    const events = scriptedRun("r1", 5);
    const frames = framesOf(events);
    server = await startServer(async (req, res) => {
      if (req.method === "GET") return sendJsonError(res, 401, "unauthorized", "token expired");
      sseHead(res);
      for (const f of frames.slice(0, 2)) await write(res, f);
      res.destroy(); // drops mid-run: the client must follow with GET …/stream
    });
    const client = new TollgateClient({ baseUrl: server.baseUrl, token: "tok", reconnect: { retries: 5, baseDelayMs: 1, maxDelayMs: 5 } });
    const stream = client.run("t1", "hi");
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const event of stream) seen.push(event);
    })().catch((e: unknown) => e);

    expect(seen).toEqual(events.slice(0, 2));
    expect(err).toBeInstanceOf(TollgateError);
    expect(err).toMatchObject({ code: "unauthorized", status: 401 });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /threads/t1/runs", "GET /threads/t1/stream"]);
    expect(server.requests[1]!.headers.authorization).toBe("Bearer tok");
  });
});
