/**
 * The signal the built-in agent gives its model (a cancel or a deadline aborts the request) is
 * let go when the call is over, though the openai SDK leaves its listener on it: a server must
 * not keep something of every model call it ever made. A real ChatOpenAI, over HTTP.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../../src/client/index.js";
import { collected } from "../../helpers/collected.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../helpers/fake-openai.js";
import { inProcessTollgates } from "../../helpers/in-process-tollgate.js";

const open = inProcessTollgates();
let server: FakeOpenAI;
beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server?.close();
});

/** The signal of each call a ChatOpenAI streams, held weakly; its own code runs as ever. */
const signals: Array<WeakRef<AbortSignal>> = [];
for (const method of ["_streamResponseChunks", "_streamChatModelEvents"] as const) {
  const real = ChatOpenAI.prototype[method] as (this: ChatOpenAI, ...args: any[]) => AsyncGenerator<unknown>;
  // bindTools makes a new ChatOpenAI, so the noting goes on the class, for this file's process only.
  (ChatOpenAI.prototype as any)[method] = async function* (this: ChatOpenAI, messages: BaseMessage[], options: { signal?: AbortSignal }, runManager?: unknown) {
    if (options.signal) signals.push(new WeakRef(options.signal));
    yield* real.call(this, messages, options, runManager);
  };
}

describe("the agent's model call", () => {
  it("lets go of the signal it gave the model once the answer is in", async () => {
    const model = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "sk-test", configuration: { baseURL: server.url }, streaming: true, maxRetries: 0 });
    server.push({ text: "hello there" });
    const t = await open({ model, systemPrompt: "" });
    const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => t.app.request(url, init) });
    expect((await client.run("signal", "hi").collect()).at(-1)).toMatchObject({ type: "done", message: "hello there" });
    expect(signals).toHaveLength(1);
    expect(await collected(signals[0]!)).toBe(true);
  });
});
