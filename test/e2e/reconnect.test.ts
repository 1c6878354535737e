import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { eventId } from "../../src/protocol/index.js";
import { startChaosProxy } from "../helpers/chaos-proxy.js";
import { startServer } from "../helpers/server-process.js";
import { type Stack, startStack, terminal, threadId } from "./support.js";

let s: Stack;
beforeAll(async () => {
  s = await startStack({}, { delayMs: 2 });
});
afterAll(async () => s?.stop());

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** Reads raw SSE frames from a response until `count` frames have arrived, then drops the connection. */
async function readFramesThenDrop(url: string, init: RequestInit, count: number): Promise<string[]> {
  const ac = new AbortController();
  const res = await fetch(url, { ...init, signal: ac.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const frames: string[] = [];
  while (frames.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buf.indexOf("\n\n")) >= 0 && frames.length < count) {
      frames.push(buf.slice(0, at));
      buf = buf.slice(at + 2);
    }
  }
  ac.abort();
  return frames;
}

describe("GET /threads/:id/stream", () => {
  it("after a dropped connection, Last-Event-ID resumes exactly where the client left off", async () => {
    const id = threadId("drop");
    s.model.push({ text: words(300) });
    const frames = await readFramesThenDrop(
      `${s.server.url}/threads/${id}/runs`,
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "go", on_disconnect: "continue" }) },
      40,
    );
    expect(frames).toHaveLength(40);
    const lastId = /^id: (.+)$/m.exec(frames.at(-1)!)![1]!;
    const rest = await s.client.stream(id, { lastEventId: lastId }).collect();
    terminal(rest, "done");
    const full = await s.client.stream(id).collect();
    // first connection's ids + second connection's ids == the whole run, in order, once each
    const seen = [...frames.map((f) => /^id: (.+)$/m.exec(f)![1]!), ...rest.map((e, i) => eventId(e.run_id, 40 + i))];
    expect(seen).toEqual(full.map((e, i) => eventId(e.run_id, i)));
    expect(rest.map((e) => JSON.stringify(e))).toEqual(full.slice(40).map((e) => JSON.stringify(e)));
  });

  it("replays the whole run after it ended, and an open interrupt up to the interrupt", async () => {
    const id = threadId("ended");
    s.model.push({ toolCalls: [{ id: "rp1", name: "refund_order", args: { order_id: "A-1001", amount_cents: 1, reason: "r" } }] });
    const live = await s.client.run(id, "refund").collect();
    const replay = await s.client.stream(id).collect();
    expect(replay).toEqual(live);
    terminal(replay, "interrupt");
    // after the terminal event's id: 204, so that a browser's EventSource stops reconnecting
    const res = await fetch(`${s.server.url}/threads/${id}/stream`, { headers: { "last-event-id": eventId(live[0]!.run_id, live.length - 1) } });
    expect([res.status, await res.text()]).toEqual([204, ""]);
    // one before it: that last event, then the stream closes
    const before = await fetch(`${s.server.url}/threads/${id}/stream?last_event_id=${eventId(live[0]!.run_id, live.length - 2)}`);
    expect(before.status).toBe(200);
    expect(await before.text()).toMatch(/^id: [^\n]+\nevent: interrupt\ndata: .+\n\n$/);
  });

  it("on a thread that has had no run yet answers 204, and the client ends with no events", async () => {
    const id = threadId("no-runs");
    await s.client.createThread({ thread_id: id });
    const res = await fetch(`${s.server.url}/threads/${id}/stream`);
    expect([res.status, await res.text()]).toEqual([204, ""]);
    expect(await s.client.stream(id).collect()).toEqual([]);
  });

  it("sends no-buffering headers", async () => {
    const id = threadId("headers");
    s.model.push({ text: "hi" });
    await s.client.run(id, "hi").collect();
    const res = await fetch(`${s.server.url}/threads/${id}/stream`);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    await res.text();
  });

  it("replays finished runs after a server restart", async () => {
    const server = await startServer({ MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: s.model.url });
    const id = threadId("restart-replay");
    s.model.push({ text: words(20) });
    const live = await new TollgateClient({ baseUrl: server.url }).run(id, "go").collect();
    await server.kill();
    const again = await startServer({ MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: s.model.url }, { dataDir: server.dataDir });
    try {
      expect(await new TollgateClient({ baseUrl: again.url }).stream(id).collect()).toEqual(live);
    } finally {
      await again.kill();
    }
  });
});

describe("the client over a connection that keeps breaking", () => {
  it("yields every event of the run exactly once, in order", async () => {
    const proxy = await startChaosProxy(s.server.url, { seed: 7, minBytes: 300, maxBytes: 3000 });
    try {
      const id = threadId("chaos");
      s.model.push({ toolCalls: [{ id: "ch1", name: "lookup_order", args: { order_id: "A-1002" } }] }, { text: words(400) });
      const flaky = new TollgateClient({ baseUrl: proxy.url, reconnect: { retries: 50, baseDelayMs: 1, maxDelayMs: 5 } });
      const got = await flaky.run(id, "go", { on_disconnect: "continue" }).collect();
      expect(proxy.cuts()).toBeGreaterThan(3);
      const reference = await s.client.stream(id).collect();
      terminal(reference, "done");
      expect(got).toEqual(reference);
    } finally {
      await proxy.close();
    }
  });
});
