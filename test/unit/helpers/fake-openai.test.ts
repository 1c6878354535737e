import { afterEach, describe, expect, it } from "vitest";
import { ChatOpenAI, ChatOpenAICompletions } from "@langchain/openai";
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { historyProblem, startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions } from "../../helpers/fake-openai.js";

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

/** The model tollgate itself builds (src/model/create-model.ts), for where LangChain's view matters. */
function completionsModel(fake: FakeOpenAI) {
  return new ChatOpenAICompletions({ model: "fake", apiKey: "x", configuration: { baseURL: fake.url, logLevel: "off" }, streaming: true, streamUsage: true, maxRetries: 0 });
}

/** A raw request, for tests that need to see the bytes rather than what the SDK makes of them. */
function post(fake: FakeOpenAI, body: object, signal?: AbortSignal) {
  return fetch(`${fake.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake", messages: [{ role: "user", content: "hi" }], ...body }),
    signal,
  });
}

/** The JSON payloads of the SSE `data:` lines, `[DONE]` left out. */
function dataLines(sse: string): any[] {
  return sse.split("\n").filter((l) => l.startsWith("data: ") && l !== "data: [DONE]").map((l) => JSON.parse(l.slice(6)));
}

/** Reads the body until `until(textSoFar)` holds, then aborts the request; returns the text read. */
async function readUntil(res: Response, ac: AbortController, until: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${JSON.stringify(text)}`);
    text += decoder.decode(value, { stream: true });
  }
  ac.abort();
  return text;
}

describe("fake-openai: stalls", () => {
  it("keepAlive: the role chunk and the text, then only SSE comments until the client leaves", async () => {
    fake = await startFakeOpenAI({ script: [{ keepAlive: true, text: "one moment", everyMs: 5 }] });
    const ac = new AbortController();
    const res = await post(fake, { stream: true }, ac.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const text = await readUntil(res, ac, (t) => t.split(": keep-alive\n\n").length > 4);
    const firstComment = text.indexOf(": keep-alive");
    // Everything after the first comment is comments: no data line, no finish, no [DONE].
    expect(text.slice(firstComment)).toMatch(/^(: keep-alive\n\n)+$/);
    const frames = dataLines(text.slice(0, firstComment));
    expect(frames.map((f) => f.choices[0].delta)).toEqual([{ role: "assistant", content: "" }, { content: "one " }, { content: "moment" }]);
    expect(frames.every((f) => f.choices[0].finish_reason === null)).toBe(true);
    const req = await fake.nextRequest();
    expect(await req.closed).toBeGreaterThanOrEqual(req.receivedAt);
  });

  it("keepAlive: LangChain skips the comments and waits for an answer that never comes", async () => {
    fake = await startFakeOpenAI({ script: [{ keepAlive: true, text: "partial", everyMs: 5 }] });
    const seen: string[] = [];
    // The subject is an answer that never comes, so a deadline is what ends it.
    const signal = AbortSignal.timeout(150);
    const consumed = (async () => {
      for await (const chunk of await completionsModel(fake!).stream("x", { signal })) if (chunk.text) seen.push(chunk.text);
    })();
    await expect(consumed).rejects.toThrow(/abort/i);
    expect(seen).toEqual(["partial"]);
    await fake.requests[0]!.closed;
  });

  it("stall: flushes 200 and the SSE headers, then sends not one byte", async () => {
    fake = await startFakeOpenAI({ script: [{ stall: true }] });
    const ac = new AbortController();
    // fetch resolving at all proves the headers were flushed without a body byte to carry them.
    const res = await post(fake, { stream: true }, ac.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const read = res.body!.getReader().read();
    const req = await fake.nextRequest();
    ac.abort();
    // Had any byte come, this read would have resolved with it instead of failing on the abort.
    await expect(read).rejects.toThrow(/abort/i);
    await req.closed;
  });

  it("stall and keepAlive without `stream`: JSON headers, then nothing", async () => {
    fake = await startFakeOpenAI({ script: [{ stall: true }, { keepAlive: true, text: "x" }] });
    for (let i = 0; i < 2; i++) {
      const ac = new AbortController();
      const res = await post(fake, { stream: false }, ac.signal);
      expect(res.headers.get("content-type")).toBe("application/json");
      const read = res.body!.getReader().read();
      const req = await fake.nextRequest();
      ac.abort();
      await expect(read).rejects.toThrow(/abort/i);
      await req.closed;
    }
  });

  it("close() drops keepAlive and stalled streams", async () => {
    fake = await startFakeOpenAI({ script: [{ keepAlive: true, everyMs: 5 }, { stall: true }] });
    const a = post(fake, { stream: true }).then((r) => r.text()).catch((e: unknown) => e);
    const b = post(fake, { stream: true }).then((r) => r.text()).catch((e: unknown) => e);
    const reqs = [await fake.nextRequest(), await fake.nextRequest()];
    await fake.close();
    await Promise.all(reqs.map((r) => r.closed));
    expect(await a).toBeInstanceOf(Error);
    expect(await b).toBeInstanceOf(Error);
  });
});

describe("fake-openai: servers that differ from OpenAI", () => {
  it("noIndex: tool-call deltas without `index`; arguments fragments carry nothing else", async () => {
    fake = await startFakeOpenAI({ script: [{ noIndex: true, toolCalls: [{ name: "lookup_order", args: { order_id: "A-1001" } }] }] });
    const frames = dataLines(await (await post(fake, { stream: true })).text());
    const deltas = frames.flatMap((f) => f.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ id: "call_1", type: "function", function: { name: "lookup_order", arguments: "" } });
    expect(deltas.length).toBeGreaterThan(2);
    for (const d of deltas.slice(1)) expect(Object.keys(d)).toEqual(["function"]), expect(Object.keys(d.function)).toEqual(["arguments"]);
    expect(deltas.map((d) => d.function.arguments).join("")).toBe('{"order_id":"A-1001"}');
    expect(frames.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });

  it("noIndex: LangChain no longer merges the fragments into one call", async () => {
    fake = await startFakeOpenAI({
      script: [
        { toolCalls: [{ name: "lookup_order", args: { order_id: "A-1" } }] },
        { noIndex: true, toolCalls: [{ name: "lookup_order", args: { order_id: "A-1" } }] },
      ],
    });
    const model = completionsModel(fake).bindTools([lookupOrder]);
    const indexed = await collect(model, "x");
    expect(indexed.tool_call_chunks).toHaveLength(1);
    expect(indexed.tool_calls).toEqual([{ type: "tool_call", id: "call_1", name: "lookup_order", args: { order_id: "A-1" } }]);
    const split = await collect(model, "x");
    // One call on the wire; LangChain keeps the named chunk and each fragment apart (no index, no id
    // to merge on): the call runs with empty args, the fragments become nameless invalid calls.
    expect(split.tool_call_chunks?.length).toBeGreaterThan(1);
    expect(split.tool_call_chunks?.map((c) => c.args).join("")).toBe('{"order_id":"A-1"}');
    expect(split.tool_calls).toEqual([{ type: "tool_call", id: "call_2", name: "lookup_order", args: {} }]);
    expect(split.invalid_tool_calls?.length).toBe(split.tool_call_chunks!.length - 1);
    expect(split.invalid_tool_calls?.every((c) => c.name === "" && c.error === "Malformed args.")).toBe(true);
  });

  it("an HTML error body goes out as text/html and reaches ChatOpenAI as an error", async () => {
    const html = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    fake = await startFakeOpenAI({ script: [{ status: 502, body: html }, { status: 502, body: html }] });
    const res = await post(fake, { stream: true });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toBe("text/html");
    expect(await res.text()).toBe(html);
    await expect(collect(completionsModel(fake), "x")).rejects.toThrow(/502/);
  });

  it("completionIds: unique by default, constant, or per second, the same on every chunk", async () => {
    const idsOf = async (f: FakeOpenAI) => {
      const frames = dataLines(await (await post(f, { stream: true, stream_options: { include_usage: true } })).text());
      const ids = new Set(frames.map((fr) => fr.id));
      expect(ids.size).toBe(1);
      return [...ids][0];
    };
    fake = await startFakeOpenAI();
    expect([await idsOf(fake), await idsOf(fake)]).toEqual(["chatcmpl-fake-0", "chatcmpl-fake-1"]);
    await fake.close();

    fake = await startFakeOpenAI({ completionIds: "constant" });
    expect([await idsOf(fake), await idsOf(fake)]).toEqual(["chatcmpl-constant", "chatcmpl-constant"]);
    // LangChain copies it onto the message id: two answers, one id.
    const model = completionsModel(fake);
    expect([(await collect(model, "a")).id, (await collect(model, "b")).id]).toEqual(["chatcmpl-constant", "chatcmpl-constant"]);
    await fake.close();

    fake = await startFakeOpenAI({ completionIds: "per-second" });
    const before = Math.floor(Date.now() / 1000);
    const id = await idsOf(fake);
    const after = Math.floor(Date.now() / 1000);
    expect(id).toMatch(/^chatcmpl-\d+$/);
    expect(Number(id.slice("chatcmpl-".length))).toBeGreaterThanOrEqual(before);
    expect(Number(id.slice("chatcmpl-".length))).toBeLessThanOrEqual(after);
    const plain = await (await post(fake, { stream: false })).json();
    expect(plain.id).toMatch(/^chatcmpl-\d+$/);
  });
});

describe("fake-openai: strict history checks", () => {
  const orphanCall = [
    { role: "user", content: "where is A-1?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "lookup_order", arguments: "{}" } }] },
    { role: "user", content: "hello?" },
  ];

  it("answers an invalid history with OpenAI's 400, records it, and keeps the scripted turn", async () => {
    fake = await startFakeOpenAI({ script: [{ text: "answered" }] });
    const res = await post(fake, { stream: true, messages: orphanCall });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({
      error: {
        message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_a",
        type: "invalid_request_error",
        param: "messages.[1].tool_calls",
        code: null,
      },
    });
    const rejected = await fake.nextRequest();
    expect(rejected.invalid).toMatch(/did not have response messages: call_a$/);
    expect(rejected.messages).toEqual(orphanCall);
    const ok = await post(fake, { stream: false });
    expect((await ok.json()).choices[0].message.content).toBe("answered");
    expect((await fake.nextRequest()).invalid).toBeUndefined();
  });

  it("the 400 reaches ChatOpenAICompletions as an error carrying OpenAI's message", async () => {
    fake = await startFakeOpenAI();
    const history = [
      new HumanMessage("where is A-1?"),
      new AIMessage({ content: "", tool_calls: [{ id: "call_a", name: "lookup_order", args: { order_id: "A-1" } }] }),
      new ToolMessage({ content: "shipped", tool_call_id: "call_a" }),
      new ToolMessage({ content: "shipped again", tool_call_id: "call_a" }),
    ];
    await expect(collect(completionsModel(fake), history as never)).rejects.toThrow(/400.*already has a response/);
    expect(fake.requests[0]!.invalid).toMatch(/already has a response/);
    // The same history without the second answer goes through.
    expect((await collect(completionsModel(fake), history.slice(0, 3) as never)).text).toBe("ok");
  });

  it("strict: false answers whatever it is sent", async () => {
    fake = await startFakeOpenAI({ strict: false, script: [{ text: "fine" }] });
    const res = await post(fake, { stream: false, messages: orphanCall });
    expect((await res.json()).choices[0].message.content).toBe("fine");
    expect(fake.requests[0]!.invalid).toBeUndefined();
  });

  const call = (id: string | undefined, name = "lookup_order") => ({ id, type: "function", function: { name, arguments: "{}" } });
  const asks = (...ids: Array<string | undefined>) => ({ role: "assistant", content: null, tool_calls: ids.map((id) => call(id)) });
  const answer = (id: string) => ({ role: "tool", tool_call_id: id, content: "done" });
  const user = { role: "user", content: "hi" };
  const missing = (ids: string) => `did not have response messages: ${ids}`;
  const orphanTool = "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'";

  it.each<[string, any[], string | null]>([
    ["a plain conversation", [{ role: "system", content: "s" }, user, { role: "assistant", content: "hello" }, user], null],
    ["calls answered in any order", [user, asks("a", "b"), answer("b"), answer("a"), { role: "assistant", content: "done" }], null],
    ["an assistant message without tool_calls entries", [user, { role: "assistant", content: "x", tool_calls: [] }, user], null],
    ["two rounds of calls", [user, asks("a"), answer("a"), asks("b"), answer("b"), user], null],
    ["names with digits, _ and -", [user, { role: "assistant", content: null, tool_calls: [call("a", "get_order-2")] }, answer("a")], null],
    ["an empty history", [], null],
    ["an unanswered call at the end", [user, asks("a")], missing("a")],
    ["one of two calls unanswered", [user, asks("a", "b"), answer("a"), user], missing("b")],
    ["both calls unanswered before an assistant message", [user, asks("a", "b"), { role: "assistant", content: "hm" }], missing("a, b")],
    ["a user message between the call and its answer", [user, asks("a"), user, answer("a")], missing("a")],
    ["a tool message with no call before it", [user, answer("a")], orphanTool],
    ["an answer to a call of an older assistant message", [user, asks("a"), answer("a"), asks("b"), answer("a")], orphanTool],
    ["an answer to an unknown id", [user, asks("a"), answer("z")], orphanTool],
    ["an answer after the run of answers ended", [user, asks("a"), answer("a"), user, answer("a")], orphanTool],
    ["a call answered twice", [user, asks("a"), answer("a"), answer("a")], "already has a response"],
    ["a tool message without tool_call_id", [user, asks("a"), { role: "tool", content: "x" }], "Missing required parameter: 'messages[2].tool_call_id'"],
    ["a call without an id", [user, asks(undefined)], "Missing required parameter: 'messages[1].tool_calls[0].id'"],
    ["a duplicate call id", [user, asks("a", "a"), answer("a")], "duplicate tool_call id 'a'"],
    ["a name with a space", [user, { role: "assistant", content: null, tool_calls: [call("a", "lookup order")] }, answer("a")], "'messages[1].tool_calls[0].function.name': string does not match pattern"],
    ["a name of 65 characters", [user, { role: "assistant", content: null, tool_calls: [call("a", "x".repeat(65))] }, answer("a")], "does not match pattern"],
    ["an empty name", [user, { role: "assistant", content: null, tool_calls: [call("a", "")] }, answer("a")], "does not match pattern"],
  ])("historyProblem: %s", (_name, messages, expected) => {
    const problem = historyProblem(messages);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toContain(expected);
  });
});
