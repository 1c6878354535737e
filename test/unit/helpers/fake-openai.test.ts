import { afterEach, describe, expect, it } from "vitest";
import { ChatOpenAI } from "@langchain/openai";
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from "../../helpers/fake-openai.js";

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(opts: FakeOpenAIOptions = {}, streaming = true) {
  fake = await startFakeOpenAI(opts);
  const model = new ChatOpenAI({ model: "fake", apiKey: "x", configuration: { baseURL: fake.url }, streaming, maxRetries: 0 });
  return { fake, model };
}

/**
 * Streams and merges the chunks. Not `invoke()`: with `streaming: true` and no streaming callback,
 * ChatOpenAI's `_generate` estimates token counts with tiktoken, which downloads its ranks from
 * tiktoken.pages.dev; offline that takes ~90 s before it falls back.
 */
async function collect(model: { stream: ChatOpenAI["stream"] }, input: string, options?: { signal?: AbortSignal }) {
  let final: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(input, options)) final = final ? final.concat(chunk) : chunk;
  if (!final) throw new Error("empty stream");
  return final;
}

const lookupOrder = tool(async ({ order_id }) => order_id, {
  name: "lookup_order",
  description: "Look up an order",
  schema: z.object({ order_id: z.string() }),
});

describe("fake-openai with ChatOpenAI", () => {
  it("streams text word by word and records the request", async () => {
    const { fake, model } = await setup({ script: [{ text: "Hello there, world" }] });
    const pieces: string[] = [];
    let final: AIMessageChunk | undefined;
    for await (const chunk of await model.stream([new HumanMessage("hi")])) {
      if (chunk.text) pieces.push(chunk.text);
      final = final ? final.concat(chunk) : chunk;
    }
    expect(pieces).toEqual(["Hello ", "there, ", "world"]);
    expect(final?.text).toBe("Hello there, world");
    expect(final?.usage_metadata?.total_tokens).toBeGreaterThan(0);
    const req = await fake.nextRequest();
    expect(req.body.stream).toBe(true);
    expect(req.body.stream_options).toEqual({ include_usage: true });
    expect(req.messages).toEqual([{ role: "user", content: "hi" }]);
    await req.finished;
  });

  it("honours chunkSize, and answers 'ok' once the script is exhausted", async () => {
    const { model } = await setup({ script: [{ text: "abcdefg", chunkSize: 3 }] });
    const pieces: string[] = [];
    for await (const chunk of await model.stream("x")) if (chunk.text) pieces.push(chunk.text);
    expect(pieces).toEqual(["abc", "def", "g"]);
    expect((await collect(model, "again")).text).toBe("ok");
  });

  it("streams parallel tool calls that LangChain merges into parsed args", async () => {
    const { fake, model } = await setup({
      script: [{ text: "Checking.", toolCalls: [{ name: "lookup_order", args: { order_id: "A-1001" } }, { id: "c2", name: "lookup_order", args: { order_id: "A-1002" } }] }],
    });
    const msg = await collect(model.bindTools([lookupOrder]), "where are my orders?");
    expect(msg.text).toBe("Checking.");
    expect(msg.tool_calls).toEqual([
      { type: "tool_call", id: "call_1", name: "lookup_order", args: { order_id: "A-1001" } },
      { type: "tool_call", id: "c2", name: "lookup_order", args: { order_id: "A-1002" } },
    ]);
    expect(msg.response_metadata.finish_reason).toBe("tool_calls");
    expect(fake.requests[0]!.body.tools[0].function.name).toBe("lookup_order");
  });

  it("sends a raw args string so malformed JSON becomes an invalid tool call", async () => {
    const { model } = await setup({ script: [{ toolCalls: [{ name: "lookup_order", args: '{"order_id": }' }] }] });
    const msg = await collect(model.bindTools([lookupOrder]), "x");
    expect(msg.tool_calls ?? []).toEqual([]);
    expect(msg.invalid_tool_calls?.[0]).toMatchObject({ name: "lookup_order", args: '{"order_id": }', id: "call_1" });
  });

  it("documents a LangChain quirk: streamed *truncated* JSON is repaired, not rejected", async () => {
    // Merged chunks go through parsePartialJson, so '{"order_id": "A-' becomes {order_id: "A-"}.
    const { model } = await setup({ script: [{ toolCalls: [{ name: "lookup_order", args: '{"order_id": "A-' }] }] });
    const msg = await collect(model.bindTools([lookupOrder]), "x");
    expect(msg.tool_calls?.[0]?.args).toEqual({ order_id: "A-" });
  });

  it("answers non-streaming requests with a chat.completion", async () => {
    const { fake, model } = await setup({ script: [{ text: "plain" }, { toolCalls: [{ name: "lookup_order", args: { order_id: "A-1" } }] }] }, false);
    expect((await model.invoke("x")).text).toBe("plain");
    const msg = await model.bindTools([lookupOrder]).invoke("y");
    expect(msg.tool_calls?.[0]).toMatchObject({ id: "call_1", name: "lookup_order", args: { order_id: "A-1" } });
    expect(fake.requests.map((r) => r.body.stream)).toEqual([false, false]);
  });

  it("surfaces an HTTP 500 as an error", async () => {
    const { model } = await setup({ script: [{ status: 500 }] });
    await expect(collect(model, "x")).rejects.toThrow(/500/);
  });

  it("surfaces garbage in the stream as an error", async () => {
    fake = await startFakeOpenAI({ script: [{ garbage: "<html>oops</html>" }] });
    // logLevel "off": the openai SDK would otherwise log the unparsable line before throwing.
    const model = new ChatOpenAI({ model: "fake", apiKey: "x", configuration: { baseURL: fake.url, logLevel: "off" }, streaming: true, maxRetries: 0 });
    await expect(collect(model, "x")).rejects.toThrow(/JSON/);
  });

  it("resolves `closed` when the client aborts a hanging stream", async () => {
    const { fake, model } = await setup({ script: [{ hang: true, text: "partial" }] });
    const ac = new AbortController();
    const seen: string[] = [];
    const consumed = (async () => {
      for await (const chunk of await model.stream("x", { signal: ac.signal })) {
        if (chunk.text) seen.push(chunk.text);
        if (chunk.text === "partial") ac.abort();
      }
    })();
    await expect(consumed).rejects.toThrow(/abort/i);
    expect(seen).toEqual(["partial"]);
    const req = await fake.nextRequest();
    const closedAt = await req.closed;
    expect(closedAt).toBeGreaterThanOrEqual(req.receivedAt);
    await req.finished;
  });

  it("stops writing when the client aborts between delayed chunks", async () => {
    const { fake, model } = await setup({ delayMs: 50, script: [{ text: "one two three four five six" }] });
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 80);
    await expect(collect(model, "x", { signal: ac.signal })).rejects.toThrow(/abort/i);
    const req = fake.requests[0]!;
    expect((await req.closed) - started).toBeLessThan(1000);
  });

  it("uses a script function after the queue, and nextRequest waits for arrivals", async () => {
    const { fake, model } = await setup({ script: (req, i) => ({ text: `#${i} ${req.messages.at(-1).content}` }) });
    fake.push({ text: "queued first" });
    const next = fake.nextRequest();
    expect((await collect(model, "a")).text).toBe("queued first");
    expect((await next).messages.at(-1).content).toBe("a");
    expect((await collect(model, "b")).text).toBe("#1 b");
  });

  it("drops hanging connections on close()", async () => {
    const { fake, model } = await setup({ script: [{ hang: true }] });
    const pending = collect(model, "x").catch((e: unknown) => e);
    const req = await fake.nextRequest();
    await fake.close();
    await req.closed;
    expect(await pending).toBeInstanceOf(Error);
    await fake.close(); // idempotent: afterEach closes again
  });
});
