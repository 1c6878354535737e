import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../../../src/client/backoff.js";
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
    expect(await client.resumeDetached("t1", "i1", decisions)).toEqual({ run_id: "r9" });
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
    expect(await new TollgateClient({ baseUrl: server.baseUrl }).resume("t1", "i1", decisions).collect()).toEqual(events);
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

  it("a stopped stream's wait ends at once: sleep resolves on abort", async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await waiting; // would time the test out if the abort were ignored
    await sleep(60_000, controller.signal); // already aborted: no wait either
  });
});
