/**
 * A real HTTP server that speaks enough of OpenAI's Chat Completions API for
 * `@langchain/openai`'s `ChatOpenAI` (and the `openai` SDK under it) to stream through it.
 * Responses are scripted turn by turn, so tests decide exactly what "the model" says.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** One scripted model answer. */
export type Turn =
  /** Streamed as content deltas: `chunkSize`-char pieces, or word by word by default. */
  | { text: string; chunkSize?: number }
  /** Tool calls (after optional text). A string `args` is sent raw, e.g. to test broken JSON. */
  | { toolCalls: ToolCallSpec[]; text?: string }
  /** An HTTP error; `body` defaults to an OpenAI-style `{"error": {...}}` JSON. */
  | { status: number; body?: string }
  /** 200 with non-JSON junk: each line goes out as an SSE `data:` line, so the SDK must parse it. */
  | { garbage: string }
  /** Headers, the role chunk and optional `text`, then nothing until the client goes away. */
  | { hang: true; text?: string }
  /** Some text, then the response ends cleanly with no finish_reason: an upstream that gave up mid-answer. */
  | { truncated: true; text: string };

/** A tool call in a scripted turn; `id` defaults to `call_<n>` (n counts calls across the server). */
export interface ToolCallSpec { id?: string; name: string; args: object | string }

export interface FakeOpenAIOptions {
  /** Wait this long before each chunk after the first one. */
  delayMs?: number;
  /** Turns answered in order; a function is asked once the queue (incl. `push`ed turns) is empty. */
  script?: Turn[] | ((req: RecordedRequest, index: number) => Turn);
}

export interface RecordedRequest {
  /** The parsed JSON body as sent by the client. */
  body: any;
  messages: any[];
  receivedAt: number;
  /** Resolves with `Date.now()` when the client went away before the response ended; else never. */
  closed: Promise<number>;
  /** Resolves when the exchange is over, whether the response ended or the client left. */
  finished: Promise<void>;
}

export interface FakeOpenAI {
  /** Base URL for `OPENAI_BASE_URL` / `configuration.baseURL`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  requests: RecordedRequest[];
  /** Appends turns to the scripted queue. */
  push(...turns: Turn[]): void;
  /** The next request not yet handed out by an earlier call; waits until it arrives. */
  nextRequest(): Promise<RecordedRequest>;
  /** Drops every open connection (hanging streams included) and stops listening. */
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 with an OS-chosen port. */
export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: Turn[] = Array.isArray(opts.script) ? [...opts.script] : [];
  const scriptFn = typeof opts.script === "function" ? opts.script : undefined;
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ index: number; resolve: (r: RecordedRequest) => void }> = [];
  let handedOut = 0;
  let callCounter = 0;

  const record = (rr: RecordedRequest) => {
    requests.push(rr);
    for (const w of waiters.filter((w) => w.index < requests.length)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(requests[w.index]!);
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the fake itself: make it loud in the test output and fail the request.
      console.error("fake-openai: handler failed", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    // Listen for the close before anything async, so an early abort is never missed.
    const gone = new AbortController();
    let resolveClosed!: (t: number) => void;
    const closed = new Promise<number>((r) => (resolveClosed = r));
    const finished = new Promise<void>((r) => res.once("close", () => r()));
    res.once("close", () => {
      if (!res.writableEnded) resolveClosed(Date.now());
      gone.abort();
    });

    let raw = "";
    try {
      for await (const chunk of req) raw += chunk;
    } catch {
      return; // the client aborted while uploading; `closed` has already fired
    }
    if (req.method !== "POST" || !req.url?.split("?")[0]!.endsWith("/chat/completions")) {
      return sendJson(res, 404, { error: { message: `fake-openai: no route ${req.method} ${req.url}`, type: "invalid_request_error" } });
    }
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendJson(res, 400, { error: { message: "fake-openai: body is not JSON", type: "invalid_request_error" } });
    }

    const rr: RecordedRequest = { body, messages: body.messages ?? [], receivedAt, closed, finished };
    const index = requests.length;
    record(rr);
    const turn = queue.shift() ?? scriptFn?.(rr, index) ?? { text: "ok" };
    const calls = "toolCalls" in turn
      ? turn.toolCalls.map((c) => ({ id: c.id ?? `call_${++callCounter}`, name: c.name, args: typeof c.args === "string" ? c.args : JSON.stringify(c.args) }))
      : [];
    const ctx: Ctx = { res, body, index, signal: gone.signal, delayMs: opts.delayMs ?? 0 };

    if ("status" in turn) {
      const errBody = turn.body ?? JSON.stringify({ error: { message: `fake-openai scripted ${turn.status}`, type: "server_error", code: null } });
      res.writeHead(turn.status, { "content-type": looksJson(errBody) ? "application/json" : "text/plain" });
      res.end(errBody);
    } else if (body.stream !== true) {
      if ("hang" in turn) return; // never answer; the client's abort ends it
      if ("garbage" in turn) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(turn.garbage);
        return;
      }
      sendJson(res, 200, completion(ctx, turn.text ?? null, calls));
    } else {
      await streamTurn(ctx, turn, calls);
    }
  }

  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...turns) => void queue.push(...turns),
    nextRequest() {
      const index = handedOut++;
      if (index < requests.length) return Promise.resolve(requests[index]!);
      return new Promise((resolve) => waiters.push({ index, resolve }));
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // keep-alive and hanging sockets would block close() forever
      });
      return closing;
    },
  };
}

interface Ctx { res: http.ServerResponse; body: any; index: number; signal: AbortSignal; delayMs: number }
type Call = { id: string; name: string; args: string };

async function streamTurn(ctx: Ctx, turn: Exclude<Turn, { status: number }>, calls: Call[]): Promise<void> {
  const { res, signal } = ctx;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  if ("garbage" in turn) {
    res.end(turn.garbage.split("\n").map((l) => `data: ${l}\n\n`).join(""));
    return;
  }
  const chunk = (delta: object, finish_reason: string | null = null) => ({
    ...envelope(ctx, "chat.completion.chunk"),
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  });
  const pieces = turn.text ? splitText(turn.text, "chunkSize" in turn ? turn.chunkSize : undefined) : [];
  // Like OpenAI: the first chunk names the role; LangChain takes the message type from it.
  const frames: object[] = [chunk({ role: "assistant", content: "" }), ...pieces.map((p) => chunk({ content: p }))];
  calls.forEach((c, i) => {
    // First delta carries index/id/type/name with empty arguments; the arguments follow in pieces.
    frames.push(chunk({ tool_calls: [{ index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const a of splitEven(c.args, 3)) frames.push(chunk({ tool_calls: [{ index: i, function: { arguments: a } }] }));
  });

  if ("hang" in turn) {
    await writeFrames(ctx, frames);
    return; // no end: the response stays open until the client aborts or close() drops it
  }
  if ("truncated" in turn) {
    await writeFrames(ctx, frames);
    if (!signal.aborted) res.end();
    return;
  }
  frames.push(chunk({}, calls.length ? "tool_calls" : "stop"));
  if (ctx.body.stream_options?.include_usage) frames.push({ ...envelope(ctx, "chat.completion.chunk"), choices: [], usage: usage(ctx, pieces.length + calls.length) });
  await writeFrames(ctx, frames);
  if (!signal.aborted) res.end("data: [DONE]\n\n");
}

/** Writes SSE frames, waiting `delayMs` between them and stopping as soon as the client is gone. */
async function writeFrames(ctx: Ctx, frames: object[]): Promise<void> {
  for (const [i, frame] of frames.entries()) {
    if (i > 0 && ctx.delayMs > 0) {
      // Rejects with AbortError when the client leaves: that is the expected way out, not a failure.
      await sleep(ctx.delayMs, undefined, { signal: ctx.signal }).catch(() => undefined);
    }
    if (ctx.signal.aborted) return;
    ctx.res.write(`data: ${JSON.stringify(frame)}\n\n`);
  }
}

function completion(ctx: Ctx, text: string | null, calls: Call[]) {
  const tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.args } }));
  return {
    ...envelope(ctx, "chat.completion"),
    choices: [{
      index: 0,
      message: { role: "assistant", content: text, refusal: null, ...(calls.length ? { tool_calls } : {}) },
      logprobs: null,
      finish_reason: calls.length ? "tool_calls" : "stop",
    }],
    usage: usage(ctx, Math.ceil((text?.length ?? 0) / 4) + calls.length),
  };
}

function envelope(ctx: Ctx, object: string) {
  return { id: `chatcmpl-fake-${ctx.index}`, object, created: Math.floor(Date.now() / 1000), model: ctx.body.model ?? "fake", system_fingerprint: "fp_fake" };
}

/** Rough token counts: enough for LangChain's usage_metadata to be plausible numbers. */
function usage(ctx: Ctx, completion_tokens: number) {
  const prompt_tokens = Math.ceil(JSON.stringify(ctx.body.messages ?? []).length / 4);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function splitText(text: string, chunkSize?: number): string[] {
  if (chunkSize && chunkSize > 0) return text.match(new RegExp(`[\\s\\S]{1,${Math.floor(chunkSize)}}`, "g")) ?? [];
  return text.match(/\s*\S+\s*|\s+/g) ?? []; // word by word, whitespace kept so pieces concat back
}

function splitEven(s: string, parts: number): string[] {
  if (!s) return [];
  const size = Math.max(1, Math.ceil(s.length / parts));
  return s.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];
}

function looksJson(s: string): boolean {
  try { JSON.parse(s); return true; } catch { return false; }
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}
