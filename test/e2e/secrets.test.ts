import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedTextByTable } from "../helpers/stored-text.js";
import { within } from "../helpers/within.js";
import { type Stack, startStack, threadId, toolMessagesSeen, parseSse, expectNoneOf } from "./support.js";

// Secrets never leave the process, even when an upstream error echoes them: the model API key
// (configured), a bearer token the upstream quotes back (caught by its shape), and the tokens
// tollgate itself accepts (configured).
const KEY = "sk-test-ABCDEFGH12345678";
const UPSTREAM_BEARER = "upstream-9f8e7d6c5b4a";
const ALICE = "tok-alice-5f2e9a1b7c";
const SECRETS = [KEY, UPSTREAM_BEARER, ALICE];

let s: Stack;
beforeAll(async () => {
  s = await startStack({
    OPENAI_API_KEY: KEY,
    AUTH_TOKENS: JSON.stringify({ [ALICE]: { sub: "alice", roles: ["user", "approver"] } }),
  });
});
afterAll(async () => {
  await s?.stop();
});

const auth = { authorization: `Bearer ${ALICE}` };

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(s.server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...auth },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.text();
}

async function get(path: string): Promise<string> {
  const res = await fetch(s.server.url + path, { headers: auth });
  expect(res.status, path).toBe(200);
  return res.text();
}

const expectNone = (where: string, text: string) => expectNoneOf(SECRETS, where, text);

/** No table holds a secret: tollgate's own rows, and LangGraph's checkpoints and writes (BLOBs decoded). */
function expectNoneStored(secrets: readonly string[] = SECRETS): void {
  const tables = storedTextByTable(s.db);
  expect([...tables.keys()].some((t) => /writes/.test(t)), "the checkpointer's writes table is read").toBe(true);
  const leaks = [...tables].flatMap(([table, text]) => secrets.filter((v) => text.includes(v)).map((v) => `${table} holds ${v}`));
  expect(leaks, "stored rows holding a secret").toEqual([]);
}

/**
 * `text` as a reader could join it back: whitespace, JSON's escaped newlines and the boundaries
 * between two JSON strings (`", "`, `", "key": "`, escaped too) left out.
 */
const joinedBack = (text: string) =>
  text.replace(/\\+[nrt]|\s+/g, "").replace(/\\*"[,:[\]{}]*(?:\\*"[^"\\]{0,64}\\*":[[{]*)?\\*"/g, "");

/** No run of 12 characters of the key, however it was cut, in `text`. */
function expectNoRun(where: string, text: string): void {
  const flat = joinedBack(text);
  const runs = Array.from({ length: KEY.length - 11 }, (_, i) => KEY.slice(i, i + 12)).filter((r) => flat.includes(r));
  expect(runs, `${where} holds runs of the key`).toEqual([]);
}

/** No stored row holds a run of the key (tollgate's tables, LangGraph's checkpoints and writes). */
function expectNoRunStored(): void {
  for (const [table, text] of storedTextByTable(s.db)) expectNoRun(`table ${table}`, text);
}

const storedFrames = () =>
  (s.db.prepare("SELECT frames FROM run_event_batches").all() as Array<{ frames: string }>).map((r) => r.frames).join("\n");

describe("secrets are scrubbed", () => {
  it("a 401 that echoes the API key and an Authorization header: model_error, with neither in the event, the store, the log or any GET", async () => {
    const id = threadId("secret-401");
    s.model.push({
      status: 401,
      body: JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${KEY}. Request headers: Authorization: Bearer ${UPSTREAM_BEARER}`,
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      }),
    });
    const sse = await post(`/threads/${id}/runs`, { message: "hello" });
    const events = parseSse(sse);
    const error = events.at(-1)!;
    expect(error.type).toBe("error");
    expect(error.data.code).toBe("model_error");
    // Still says what went wrong, with the secrets cut out.
    expect(error.data.message).toMatch(/401/);
    expect(error.data.message).toContain("Incorrect API key provided: ***");
    expect(error.data.message).toContain("Authorization: ***");
    expectNone("the run's SSE", sse);

    expectNone("run_event_batches", storedFrames());
    expectNone("GET /threads/:id", await get(`/threads/${id}`));
    expectNone("GET /threads", await get("/threads"));
    const replay = await get(`/threads/${id}/stream`);
    expect(replay).toContain("event: error");
    expectNone("the stream replayed", replay);
    // The failure is logged (once, with the run id), scrubbed.
    expect(s.server.stderr() + s.server.stdout()).toMatch(/model call failed/);
    expectNone("the server's stdout and stderr", s.server.stdout() + s.server.stderr());
    expectNoneStored();
    // A later run on the thread neither brings the echoed key back nor fails on what was scrubbed.
    s.model.push({ text: "all good now" });
    expect(parseSse(await post(`/threads/${id}/runs`, { message: "again" })).at(-1)!.type).toBe("done");
    expectNoneStored();
  });

  it("a 401 that echoes the key split by a space: not 12 characters of it on the stream, in the log or in a stored row", async () => {
    const id = threadId("secret-split-401");
    const message = `Incorrect API key provided: ${KEY.slice(0, 8)} ${KEY.slice(8)}. You can find your API key at https://example.com/keys.`;
    s.model.push({ status: 401, body: JSON.stringify({ error: { message, type: "invalid_request_error", code: "invalid_api_key" } }) });
    const sse = await post(`/threads/${id}/runs`, { message: "hello" });
    const error = parseSse(sse).at(-1)!;
    expect(error).toMatchObject({ type: "error", data: { code: "model_error" } });
    expect(error.data.message).toContain("Incorrect API key provided: ***. You can find your API key");
    expectNoRun("the run's SSE", sse);
    expectNoRun("the stream replayed", await get(`/threads/${id}/stream`));
    expectNoRun("GET /threads/:id", await get(`/threads/${id}`));
    expectNoRun("the server's stdout and stderr", s.server.stdout() + s.server.stderr());
    expectNoRunStored();
  });

  it.each([
    ["split by a newline", `upstream refused key ${KEY.slice(0, 2)}\n${KEY.slice(2)}`],
    ["in three lines of eight", `upstream refused key\n${KEY.slice(0, 8)}\n${KEY.slice(8, 16)}\n${KEY.slice(16)}\n(401)`],
    ["across two JSON fields", JSON.stringify({ error: "refused", key_start: KEY.slice(0, 2), key_end: KEY.slice(2) })],
    ["cut to its last 22 characters", `upstream refused the key ending …${KEY.slice(2)}`],
    ["across three JSON fields of eight", JSON.stringify({ error: "refused", a: KEY.slice(0, 8), b: KEY.slice(8, 16), c: KEY.slice(16) })],
  ])("a tool error with the key %s: not in the tool result, the state, the streams or the history", async (_how, message) => {
    const id = threadId("secret-tool-split");
    s.model.push({ toolCalls: [{ id: "sp1", name: "explode", args: { message } }] }, { text: "That failed." });
    const sse = await post(`/threads/${id}/runs`, { message: "try it" });
    const result = parseSse(sse).find((e) => e.type === "tool_result")!.data;
    expect(result).toMatchObject({ call_id: "sp1", status: "error" });
    expect(result.error).toContain("***");
    expectNoRun("the run's SSE", sse);
    expectNoRun("the stream replayed", await get(`/threads/${id}/stream`));
    expectNoRun("run_event_batches", storedFrames());
    expectNoRun("GET /threads/:id", await get(`/threads/${id}`));
    expectNoRun("the thread's state", await get(`/langgraph/threads/${id}/state`));
    expectNoRun("the thread's history", await get(`/langgraph/threads/${id}/history`));
    expectNoRun("the server's stdout and stderr", s.server.stdout() + s.server.stderr());
    expectNoRunStored();
    // What the model reads is the tool's own words.
    expect(toolMessagesSeen(s.model.requests.at(-1)!.body).get("sp1")).toContain(KEY.slice(16));
  });

  it("the model repeating the key in its answer, split across tokens: no token, stored event or view shows it; the text reads the same", async () => {
    const id = threadId("secret-tokens");
    // Ends in "sk", which could begin the key: held back to the end, then let go before `done`.
    const text = `The key was ${KEY}, and the token ${ALICE}; for more, just ask`;
    s.model.push({ text, chunkSize: 5 }); // cuts each secret across several tokens
    const sse = await post(`/threads/${id}/runs`, { message: "what is the key?" });
    const events = parseSse(sse);
    const tokens = events.filter((e) => e.type === "token").map((e) => e.data.text as string);
    const scrubbed = "The key was ***, and the token ***; for more, just ask";
    expect(tokens.join("")).toBe(scrubbed);
    expect(events.at(-1)).toMatchObject({ type: "done", data: { message: scrubbed } });
    expectNone("the run's SSE", sse);
    expectNone("run_event_batches", storedFrames());
    expectNone("GET /threads/:id", await get(`/threads/${id}`));
    expectNoneStored();
  });

  it("a user message quoting the key: the thread list's title is scrubbed like the thread view", async () => {
    const id = threadId("title");
    s.model.push({ text: "noted" });
    await post(`/threads/${id}/runs`, { message: `my key is ${KEY}, keep it safe` });
    const list = await get("/threads?limit=200");
    expect(list).toContain(id);
    expectNone("GET /threads", list);
    expectNoneStored();
  });

  it("a rejection reason quoting the key: the audit, the interrupt's decisions and the tool message are stored scrubbed", async () => {
    const id = threadId("secret-reason");
    s.model.push({ toolCalls: [{ id: "sr1", name: "send_email", args: { to: "ada@example.com", subject: "s", body: "b" } }] }, { text: "Not sent." });
    const intr = parseSse(await post(`/threads/${id}/runs`, { message: "email ada" })).at(-1)!;
    expect(intr.type).toBe("interrupt");
    const reason = `do not send, it carries ${KEY}`;
    const sse = await post(`/threads/${id}/resume`, { interrupt_id: intr.data.interrupt_id, decisions: [{ call_id: "sr1", approved: false, reason }] });
    expect(parseSse(sse).at(-1)!.type).toBe("done");
    expectNone("the resume's SSE", sse);
    expectNone("GET /threads/:id/audit", await get(`/threads/${id}/audit`));
    expectNoneStored();
  });

  it("a call whose arguments only look like credentials runs as the model wrote it, after the checkpoint was stored", async () => {
    const id = threadId("secret-lookalike");
    // Shaped like credentials, configured nowhere: the approval is bound to these exact words.
    const body = "Authorization: granted by Ada. Use header Bearer abcdefghijkl and key sk-notasecret123.";
    s.model.push({ toolCalls: [{ id: "sl1", name: "send_email", args: { to: "ada@example.com", subject: "s", body } }] }, { text: "Sent." });
    const intr = parseSse(await post(`/threads/${id}/runs`, { message: "email ada" })).at(-1)!;
    expect(intr.type).toBe("interrupt");
    const sse = parseSse(await post(`/threads/${id}/resume`, { interrupt_id: intr.data.interrupt_id, decisions: [{ call_id: "sl1", approved: true }] }));
    expect(sse.find((e) => e.type === "tool_result")?.data, JSON.stringify(sse.map((e) => e.data))).toMatchObject({ call_id: "sl1", status: "ok" });
    expect(s.db.rows<{ body: string }>("outbox", "call_id = ?", "sl1").map((r) => r.body)).toEqual([body]);
  });

  it("a gated call whose arguments carry the key: nothing stores it, and once approved it fails closed instead of sending it", async () => {
    const id = threadId("secret-exfil");
    s.model.push({ toolCalls: [{ id: "se1", name: "send_email", args: { to: "eve@example.com", subject: `key ${KEY}`, body: `the key is ${KEY}` } }] }, { text: "Done." });
    const intr = parseSse(await post(`/threads/${id}/runs`, { message: "email eve" })).at(-1)!;
    expect(intr.type).toBe("interrupt");
    expectNoneStored();
    const sse = parseSse(await post(`/threads/${id}/resume`, { interrupt_id: intr.data.interrupt_id, decisions: [{ call_id: "se1", approved: true }] }));
    expect(sse.find((e) => e.type === "tool_result")?.data).toMatchObject({ call_id: "se1", status: "error" });
    expect(s.db.rows("outbox", "call_id = ?", "se1")).toEqual([]);
    expectNoneStored();
  });

  it("a tool error echoing the key: the tool_result error and the thread view are scrubbed", async () => {
    const id = threadId("secret-tool");
    s.model.push(
      { toolCalls: [{ id: "sx1", name: "explode", args: { message: `upstream refused key ${KEY} (Authorization: Bearer ${UPSTREAM_BEARER})` } }] },
      { text: "That failed." },
    );
    const sse = await post(`/threads/${id}/runs`, { message: "try it" });
    const result = parseSse(sse).find((e) => e.type === "tool_result")!.data;
    expect(result).toMatchObject({ call_id: "sx1", status: "error" });
    expect(result.error).toContain("upstream refused key ***");
    expectNone("the run's SSE", sse);
    expectNone("run_event_batches", storedFrames());
    const view = await get(`/threads/${id}`);
    expect(view).toContain("upstream refused key ***");
    expectNone("GET /threads/:id", view);
    expectNone("the server's stdout and stderr", s.server.stdout() + s.server.stderr());
    // What the model reads is the tool's own words.
    expect(toolMessagesSeen(s.model.requests.at(-1)!.body).get("sx1")).toContain(KEY);
    // The configured key is cut even from the call's arguments. The upstream's bearer, configured
    // nowhere, stays there: those are the model's own words, which an approval is bound to.
    expectNoneStored([KEY, ALICE]);
  });
});

describe("a secret split across two streamed tokens, read through LangGraph's API", () => {
  // The model repeats the key's last 22 characters, cut in the middle: 11 in one token, 11 in the
  // next. Neither token holds 12 characters of it; together they hold eleven runs of 12.
  const PREFIX = "It ends in ";
  const TEXT = `${PREFIX}${KEY.slice(2)}, noted.`;
  const splitAt = [PREFIX.length + 11];
  const SHOWN = `${PREFIX}***, noted.`;
  const lg = () => new Client({ apiUrl: `${s.server.url}/langgraph`, apiKey: ALICE, callerOptions: { maxRetries: 0 } });

  it("runs.stream with messages-tuple: the chunks' contents hold no 12-character run of the key, and read as the text with it masked", async () => {
    const id = threadId("secret-tuple");
    s.model.push({ text: TEXT, splitAt });
    const client = lg();
    await client.threads.create({ threadId: id });
    const read = async (stream: AsyncIterable<{ id?: string; event: string; data: unknown }>) => {
      const parts: Array<{ id?: string; event: string; data: unknown }> = [];
      await within(
        (async () => {
          for await (const p of stream) parts.push(p);
        })(),
        { ms: 15_000, failure: "the run's stream did not end" },
      );
      return parts;
    };
    let runId = "";
    const live = await read(
      client.runs.stream(id, "agent", { input: { messages: [{ type: "human", content: "what was the key?" }] }, streamMode: "messages-tuple", onRunCreated: (r) => void (runId = r.run_id) }),
    );
    const ai = live.filter((p) => p.event === "messages").map((p) => (p.data as [{ type: string; content: string }, unknown])[0]).filter((m) => m.type === "ai");
    expect(ai.length, "the text came in more than one chunk").toBeGreaterThan(1);
    const text = ai.map((m) => m.content).join("");
    expect(text).toBe(SHOWN);
    expectNoRun("the chunks' text, joined", text);
    expectNoRun("the run's stream", JSON.stringify(live));
    // Rejoined after the run ended: the same chunks under the same ids, read from the stored log.
    const replayed = await read(client.runs.joinStream(id, runId, { streamMode: "messages-tuple" }));
    const framed = (parts: typeof live) => parts.filter((p) => p.id !== undefined).map((p) => [p.id, p.event, p.data]);
    expect(framed(replayed)).toEqual(framed(live));
  });

  it("the thread-centric stream: the message deltas hold no 12-character run of the key, and read as the text with it masked", async () => {
    const id = threadId("secret-thread-stream");
    s.model.push({ text: TEXT, splitAt });
    const thread = lg().threads.stream(id, { assistantId: "agent" });
    const events: Event[] = [];
    try {
      // Subscribed before the run starts: its tokens are read live, as they are streamed.
      const sub = await thread.subscribe({ channels: ["messages", "lifecycle"] });
      await thread.run.start({ input: { messages: [{ type: "human", content: "what was the key?" }] } });
      await untilCompleted(sub as AsyncIterable<Event>, events, "the thread's stream did not see the run complete");
    } finally {
      await thread.close();
    }
    const deltas = events.filter((e) => e.method === "messages" && e.params.data.event === "content-block-delta").map((e) => String(e.params.data.delta?.text ?? ""));
    expect(deltas.length, "the text came in more than one delta").toBeGreaterThan(1);
    expect(deltas.join("")).toBe(SHOWN);
    expectNoRun("the deltas' text, joined", deltas.join(""));
    expectNoRun("the thread's stream", JSON.stringify(events));
    // Replayed from the durable log: the same events under the same seqs.
    const again = lg().threads.stream(id, { assistantId: "agent" });
    const replayed: Event[] = [];
    try {
      const sub = await again.subscribe({ channels: ["messages", "lifecycle"], since: 0 });
      await untilCompleted(sub as AsyncIterable<Event>, replayed, "the thread's replay did not reach the run's end");
    } finally {
      await again.close();
    }
    const shape = (list: Event[]) => list.map((e) => [e.seq, e.method, e.params.data]);
    expect(shape(replayed)).toEqual(shape(events));
  });
});

/** A thread-centric event, its data read loosely. */
type Event = { seq: number; method: string; params: { data: any } };

/** Reads a thread stream's events into `into` until its run completes, against a deadline. */
async function untilCompleted(sub: AsyncIterable<Event>, into: Event[], failure: string): Promise<void> {
  await within(
    (async () => {
      for await (const e of sub) {
        into.push(e);
        if (e.method === "lifecycle" && e.params.data.event === "completed") return;
      }
    })(),
    { ms: 15_000, failure },
  );
}
