import { afterEach, describe, expect, it } from "vitest";
import { readSse, TollgateClient, type SseMessage } from "../../../src/client/index.js";
import { mulberry32, sseHead, startServer, write, type TestServer } from "./http-fixture.js";

const enc = new TextEncoder();

function bodyOf(chunks: Uint8Array[], failAtEnd?: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]!);
      else if (failAtEnd) controller.error(failAtEnd);
      else controller.close();
    },
  });
}

async function readAll(chunks: Uint8Array[]): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const message of readSse(bodyOf(chunks))) out.push(message);
  return out;
}

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [0, ...at, bytes.length];
  return points.slice(1).map((end, i) => bytes.slice(points[i], end));
}

const SAMPLE =
  ": ping\n\n" +
  'id: r1:0\nevent: token\ndata: {"run_id":"r1","text":"héllo 🌍 日本"}\n\n' +
  ": ping\n\n" +
  'id: r1:1\nevent: token\ndata: {"run_id":"r1",\ndata: "text":"€"}\n\n' +
  'id: r1:2\nevent: done\ndata: {"run_id":"r1","outcome":"completed","message":"ok 👍"}\n\n';

const EXPECTED: SseMessage[] = [
  { id: "r1:0", event: "token", data: '{"run_id":"r1","text":"héllo 🌍 日本"}' },
  { id: "r1:1", event: "token", data: '{"run_id":"r1",\n"text":"€"}' },
  { id: "r1:2", event: "done", data: '{"run_id":"r1","outcome":"completed","message":"ok 👍"}' },
];

describe("readSse", () => {
  it("joins multi-line data with \\n and drops comments", async () => {
    expect(await readAll([enc.encode(SAMPLE)])).toEqual(EXPECTED);
  });

  it("parses CRLF line endings, also when a chunk ends between \\r and \\n", async () => {
    const bytes = enc.encode(SAMPLE.replaceAll("\n", "\r\n"));
    expect(await readAll([bytes])).toEqual(EXPECTED);
    const crAt = bytes.indexOf(13, 20) + 1; // just after a \r
    expect(bytes[crAt]).toBe(10);
    expect(await readAll(cut(bytes, [crAt]))).toEqual(EXPECTED);
  });

  it.each([
    ["LF", SAMPLE],
    ["CRLF", SAMPLE.replaceAll("\n", "\r\n")],
  ])("gives the same messages for every two-chunk split (%s), multi-byte characters included", async (_name, text) => {
    const bytes = enc.encode(text);
    // The sample must hold characters of 2, 3 and 4 bytes for the splits to land inside them.
    expect(bytes.length).toBeGreaterThan(text.length + 10);
    for (let at = 1; at < bytes.length; at++) {
      expect(await readAll(cut(bytes, [at])), `split at byte ${at}`).toEqual(EXPECTED);
    }
  });

  it("gives the same messages for one-byte chunks and for random multi-way splits", async () => {
    const bytes = enc.encode(SAMPLE);
    expect(await readAll(cut(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)))).toEqual(EXPECTED);
    const rng = mulberry32(7);
    for (let round = 0; round < 200; round++) {
      const points = [...new Set(Array.from({ length: 1 + Math.floor(rng() * 8) }, () => 1 + Math.floor(rng() * (bytes.length - 1))))];
      points.sort((a, b) => a - b);
      expect(await readAll(cut(bytes, points)), `split at ${points.join(",")}`).toEqual(EXPECTED);
    }
  });

  it("does not yield a frame cut off by the end of the body", async () => {
    const bytes = enc.encode('id: r1:0\nevent: token\ndata: {"run_id":"r1","text":"a"}\n\nid: r1:1\nevent: token\ndata: {"run_id":"r1","text":"b"}\n');
    expect(await readAll([bytes])).toEqual([{ id: "r1:0", event: "token", data: '{"run_id":"r1","text":"a"}' }]);
  });

  it("yields what arrived, then throws the read error", async () => {
    const failure = new Error("socket reset");
    const seen: SseMessage[] = [];
    const read = async () => {
      for await (const m of readSse(bodyOf([enc.encode('id: r1:0\nevent: token\ndata: {"run_id":"r1","text":"a"}\n\nid: r1:1\n')], failure))) seen.push(m);
    };
    await expect(read()).rejects.toBe(failure);
    expect(seen.map((m) => m.id)).toEqual(["r1:0"]);
  });
});

describe("SSE over a real socket", () => {
  let server: TestServer | undefined;
  afterEach(async () => server?.close());

  it("parses CRLF, comments, multi-line data and chunks split inside a UTF-8 character", async () => {
    const bytes = enc.encode(SAMPLE.replaceAll("\n", "\r\n"));
    const emoji = bytes.indexOf(0xf0); // first byte of 🌍
    server = await startServer(async (_req, res) => {
      sseHead(res);
      res.socket?.setNoDelay(true);
      for (const piece of cut(bytes, [emoji + 2, emoji + 3, bytes.length - 3])) await write(res, piece);
      res.end();
    });
    const events = await new TollgateClient({ baseUrl: server.baseUrl }).stream("t1").collect();
    expect(events).toEqual([
      { type: "token", run_id: "r1", text: "héllo 🌍 日本" },
      { type: "token", run_id: "r1", text: "€" },
      { type: "done", run_id: "r1", outcome: "completed", message: "ok 👍" },
    ]);
  });
});
