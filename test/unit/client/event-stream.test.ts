import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { parseEventId, type ProtocolEvent } from "../../../src/protocol/index.js";
import { TollgateClient, TollgateError } from "../../../src/client/index.js";
import { framesOf, mulberry32, scriptedRun, sendJsonError, sseHead, startServer, write, type TestServer } from "./http-fixture.js";

const FAST = { retries: 5, baseDelayMs: 1, maxDelayMs: 5 };

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function clientFor(s: TestServer, reconnect = FAST): TollgateClient {
  return new TollgateClient({ baseUrl: s.baseUrl, reconnect });
}

async function take(it: AsyncIterator<ProtocolEvent>, n: number): Promise<ProtocolEvent[]> {
  const out: ProtocolEvent[] = [];
  for (let i = 0; i < n; i++) {
    const step = await it.next();
    if (step.done) throw new Error(`stream ended after ${i} events`);
    out.push(step.value);
  }
  return out;
}

async function rest(it: AsyncIterator<ProtocolEvent>): Promise<ProtocolEvent[]> {
  const out: ProtocolEvent[] = [];
  for (let step = await it.next(); !step.done; step = await it.next()) out.push(step.value);
  return out;
}

describe("reconnect", () => {
  it("resumes with Last-Event-ID after the socket is destroyed mid-stream, yielding each event once, in order", async () => {
    const events = scriptedRun("r1", 6);
    const frames = framesOf(events);
    let first: ServerResponse | undefined;
    server = await startServer(async (req, res) => {
      sseHead(res);
      if (req.method === "POST") {
        first = res;
        for (const f of frames.slice(0, 3)) await write(res, f);
        return; // held open until the test cuts it
      }
      // The replay overlaps what the client already has: it must drop seq 1 and 2.
      for (const f of frames.slice(1)) await write(res, f);
      res.end();
    });
    const iterator = clientFor(server).run("t1", "hi")[Symbol.asyncIterator]();
    const head = await take(iterator, 3);
    first!.destroy();
    const tail = await rest(iterator);

    expect([...head, ...tail]).toEqual(events);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /threads/t1/runs", "GET /threads/t1/stream"]);
    expect(server.requests[1]!.headers["last-event-id"]).toBe("r1:2");
  });

  it.each([1, 2, 3, 42])(
    "yields every event of a 200-event run exactly once while connections die at random points (seed %i)",
    async (seed) => {
      const events = scriptedRun("r1", 200);
      const frames = framesOf(events);
      const rng = mulberry32(seed);
      const pick = (n: number) => Math.floor(rng() * n);
      server = await startServer(async (req, res) => {
        let from = 0;
        if (req.method === "GET") {
          const last = parseEventId(String(req.headers["last-event-id"]));
          if (!last) return void sendJsonError(res, 400, "invalid_request", "no Last-Event-ID");
          from = Math.max(0, last.seq + 1 - pick(4)); // replay a few old frames too
        }
        // A run's POST that drops before its first event is unrecoverable by design (tested
        // below), so the POST always delivers at least one frame; every GET may die anywhere.
        const isPost = req.method === "POST";
        if (!isPost && pick(10) === 0) return void res.socket?.destroy(); // dies before any byte
        sseHead(res);
        const whole = isPost ? 1 + pick(11) : pick(12);
        const end = Math.min(frames.length, from + whole);
        const bytes = Buffer.concat([Buffer.from(": ping\n\n"), ...frames.slice(from, end)]);
        const next = frames[end];
        const partial = next ? next.subarray(0, pick(next.length)) : Buffer.alloc(0);
        const all = Buffer.concat([bytes, partial]);
        // Uneven writes so frame and character boundaries fall anywhere.
        for (let at = 0; at < all.length; ) {
          const size = 1 + pick(80);
          await write(res, all.subarray(at, at + size));
          at += size;
        }
        if (!next) res.end();
        else if (pick(2) === 0) res.destroy();
        else res.end(); // a clean end without a terminal event is a drop too
      });

      const got = await clientFor(server, { retries: 10, baseDelayMs: 1, maxDelayMs: 2 }).run("t1", "go").collect();

      expect(got).toEqual(events);
      const posts = server.requests.filter((r) => r.method === "POST");
      expect(posts).toHaveLength(1);
      // The schedule must really have cut the run many times for this test to mean anything.
      expect(server.requests.length).toBeGreaterThan(15);
    },
  );

  it("does not re-POST when the run's request fails before any byte", async () => {
    server = await startServer((_req, res) => void res.socket?.destroy());
    const err = await clientFor(server).run("t1", "hi").collect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect((err as TollgateError).code).toBe("network_error");
    expect(server.requests.map((r) => r.method)).toEqual(["POST"]);
  });

  it("does not reconnect a run whose stream drops before its first event", async () => {
    server = await startServer(async (_req, res) => {
      sseHead(res);
      await write(res, ": ping\n\n");
      res.destroy();
    });
    const err = await clientFor(server).run("t1", "hi").collect().catch((e: unknown) => e);
    expect((err as TollgateError).code).toBe("network_error");
    expect(server.requests).toHaveLength(1);
  });

  it("recovers a run that drops before its first event when the server named the run (X-Run-Id)", async () => {
    const run = scriptedRun("r9", 4);
    const frames = framesOf(run);
    server = await startServer(async (req, res) => {
      if (req.method === "POST") {
        res.writeHead(200, { "content-type": "text/event-stream", "x-run-id": "r9" });
        res.flushHeaders();
        return void res.destroy();
      }
      expect(req.headers["last-event-id"]).toBeUndefined(); // nothing seen yet: the whole run
      sseHead(res);
      await write(res, frames.join(""));
      res.end();
    });
    expect(await clientFor(server).run("t1", "hi").collect()).toEqual(run);
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "GET"]);
  });

  it("refuses a replay of another run than the one the POST started", async () => {
    server = await startServer(async (req, res) => {
      if (req.method === "POST") {
        res.writeHead(200, { "content-type": "text/event-stream", "x-run-id": "mine" });
        res.flushHeaders();
        return void res.destroy();
      }
      sseHead(res);
      await write(res, framesOf(scriptedRun("someone-elses", 2)).join(""));
      res.end();
    });
    const err = await clientFor(server).run("t1", "hi").collect().catch((e: unknown) => e);
    expect((err as TollgateError).code).toBe("protocol_error");
  });

  it("retries a stream() whose first GET fails, without Last-Event-ID", async () => {
    const frames = framesOf(scriptedRun("r1", 3));
    server = await startServer(async (_req, res) => {
      if (server!.requests.length === 1) return void res.socket?.destroy();
      sseHead(res);
      for (const f of frames) await write(res, f);
      res.end();
    });
    expect(await clientFor(server).stream("t1").collect()).toHaveLength(3);
    expect(server.requests.map((r) => r.headers["last-event-id"])).toEqual([undefined, undefined]);
  });

  it("gives up with network_error after `retries` reconnects that bring nothing new", async () => {
    const frames = framesOf(scriptedRun("r1", 5));
    server = await startServer(async (req, res) => {
      sseHead(res);
      await write(res, req.method === "POST" ? frames[0]! : Buffer.concat(frames.slice(0, 1)));
      res.destroy();
    });
    const stream = clientFor(server, { retries: 3, baseDelayMs: 1, maxDelayMs: 1 }).run("t1", "hi");
    const err = await stream.collect().catch((e: unknown) => e);
    expect((err as TollgateError).code).toBe("network_error");
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "GET", "GET", "GET"]);
    expect(server.requests.slice(1).map((r) => r.headers["last-event-id"])).toEqual(["r1:0", "r1:0", "r1:0"]);
    expect(stream.lastEventId).toBe("r1:0");
  });

  it("retries a 503 on reconnect but throws the server's 404", async () => {
    const frames = framesOf(scriptedRun("r1", 5));
    server = await startServer(async (req, res) => {
      const n = server!.requests.length;
      if (n === 1) {
        sseHead(res);
        await write(res, frames[0]!);
        return void res.destroy();
      }
      if (n === 2) return void sendJsonError(res, 503, "unavailable");
      sendJsonError(res, 404, "thread_not_found", "no such thread");
    });
    const err = await clientFor(server).stream("t1").collect().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "TollgateError", code: "thread_not_found", status: 404, message: "no such thread" });
    expect(server.requests).toHaveLength(3);
  });

  it("stream({lastEventId}) sends it and skips what the server replays up to it", async () => {
    const events = scriptedRun("r1", 5);
    const frames = framesOf(events);
    server = await startServer(async (_req, res) => {
      sseHead(res);
      for (const f of frames) await write(res, f); // a server that ignores the header
      res.end();
    });
    const stream = clientFor(server).stream("t1", { lastEventId: "r1:2" });
    expect(stream.lastEventId).toBe("r1:2");
    expect(await stream.collect()).toEqual(events.slice(3));
    expect(server.requests[0]!.headers["last-event-id"]).toBe("r1:2");
    expect(stream.lastEventId).toBe("r1:4");
  });
});

describe("ending", () => {
  it("ends at the terminal event and closes a connection the server keeps open", async () => {
    const events = scriptedRun("r1", 3);
    server = await startServer(async (_req, res) => {
      sseHead(res);
      for (const f of framesOf(events)) await write(res, f);
      // no res.end(): only the client can end this
    });
    expect(await clientFor(server).stream("t1").collect()).toEqual(events);
    await server.requests[0]!.closed;
  });

  it("stop() during a pending next() ends the iterator quietly and closes the request", async () => {
    const frames = framesOf(scriptedRun("r1", 5));
    server = await startServer(async (_req, res) => {
      sseHead(res);
      await write(res, frames[0]!);
    });
    const stream = clientFor(server).run("t1", "hi");
    const iterator = stream[Symbol.asyncIterator]();
    await take(iterator, 1);
    const pending = iterator.next();
    stream.stop();
    expect(await pending).toEqual({ done: true, value: undefined });
    await server.requests[0]!.closed;
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(server.requests).toHaveLength(1);
  });

  it("stop() drops events already received but not yet handed out", async () => {
    const frames = framesOf(scriptedRun("r1", 5));
    server = await startServer(async (_req, res) => {
      sseHead(res);
      await write(res, Buffer.concat(frames.slice(0, 3))); // one write: arrives as one chunk
    });
    const stream = clientFor(server).stream("t1");
    const iterator = stream[Symbol.asyncIterator]();
    await take(iterator, 1);
    stream.stop();
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(stream.lastEventId).toBe("r1:0");
  });

  it("stop() during the reconnect backoff ends at once without reconnecting", async () => {
    const frames = framesOf(scriptedRun("r1", 5));
    server = await startServer(async (_req, res) => {
      sseHead(res);
      await write(res, frames[0]!);
      res.destroy();
    });
    const stream = clientFor(server, { retries: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 }).run("t1", "hi");
    const iterator = stream[Symbol.asyncIterator]();
    await take(iterator, 1);
    const pending = iterator.next();
    await server.requests[0]!.closed;
    stream.stop();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(server.requests).toHaveLength(1);
  });

  it("stop() before iterating aborts the request that was already sent", async () => {
    server = await startServer((_req, res) => sseHead(res));
    const stream = clientFor(server).run("t1", "hi");
    const request = await server.request(0);
    stream.stop();
    await request.closed;
    expect(await stream.collect()).toEqual([]);
  });

  it("breaking out of for-await closes the connection", async () => {
    const frames = framesOf(scriptedRun("r1", 5));
    server = await startServer(async (_req, res) => {
      sseHead(res);
      await write(res, Buffer.concat(frames.slice(0, 2)));
    });
    for await (const event of clientFor(server).stream("t1")) {
      expect(event.type).toBe("token");
      break;
    }
    await server.requests[0]!.closed;
  });
});

describe("bad frames", () => {
  it.each([
    ["unknown type", 'id: r1:0\nevent: bogus\ndata: {"run_id":"r1"}\n\n'],
    ["missing field", 'id: r1:0\nevent: token\ndata: {"run_id":"r1"}\n\n'],
    ["data not JSON", "id: r1:0\nevent: token\ndata: {oops\n\n"],
    ["data not an object", "id: r1:0\nevent: token\ndata: [1]\n\n"],
    ["no id", 'event: token\ndata: {"run_id":"r1","text":"a"}\n\n'],
    ["id of another run", 'id: r2:0\nevent: token\ndata: {"run_id":"r1","text":"a"}\n\n'],
  ])("%s → protocol_error", async (_name, frame) => {
    server = await startServer(async (_req, res) => {
      sseHead(res);
      await write(res, frame);
    });
    const err = await clientFor(server).stream("t1").collect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TollgateError);
    expect((err as TollgateError).code).toBe("protocol_error");
    await server.requests[0]!.closed;
  });

  it("a 200 that is not an event stream → protocol_error", async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    await expect(clientFor(server).stream("t1").collect()).rejects.toMatchObject({ code: "protocol_error" });
  });
});
