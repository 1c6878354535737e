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
  /**
   * Streamed as content deltas: `chunkSize`-char pieces, or word by word by default; `splitAt`:
   * cut exactly at these offsets into `text` instead (a test that decides where a token ends).
   */
  | { text: string; chunkSize?: number; splitAt?: number[] }
  /**
   * Tool calls (after optional text). A string `args` is sent raw, e.g. to test broken JSON.
   * `noIndex` leaves `index` out of the deltas, as some servers do: LangChain, merging by index
   * or id, then sees the argument fragments as calls of their own.
   */
  | { toolCalls: ToolCallSpec[]; text?: string; noIndex?: boolean }
  /** An HTTP error; `body` defaults to an OpenAI-style `{"error": {...}}` JSON; an HTML body goes out as text/html. */
  | { status: number; body?: string }
  /** 200 with non-JSON junk: each line goes out as an SSE `data:` line, so the SDK must parse it. */
  | { garbage: string }
  /** Headers, the role chunk and optional `text`, then nothing until the client goes away. */
  | { hang: true; text?: string }
  /**
   * Like `hang`, but an SSE comment `: keep-alive` every `everyMs` (default 50) until the client
   * goes away, never another data line: what some hosted proxies send while a request is queued.
   * Bytes keep arriving, so only a deadline on the *answer* (not on idle sockets) ends it.
   */
  | { keepAlive: true; text?: string; everyMs?: number }
  /** 200 and the headers, flushed; then not one byte until the client goes away. */
  | { stall: true }
  /** Some text, then the response ends cleanly with no finish_reason: an upstream that gave up mid-answer. */
  | { truncated: true; text: string };

/** A tool call in a scripted turn; `id` defaults to `call_<n>` (n counts calls across the server). */
export interface ToolCallSpec { id?: string; name: string; args: object | string }

export interface FakeOpenAIOptions {
  /** Wait this long before each chunk after the first one. */
  delayMs?: number;
  /** Turns answered in order; a function is asked once the queue (incl. `push`ed turns) is empty. */
  script?: Turn[] | ((req: RecordedRequest, index: number) => Turn);
  /**
   * The `id` of each response. "unique" (default): `chatcmpl-fake-<request index>`; "constant":
   * always `chatcmpl-constant`; "per-second": `chatcmpl-<unix seconds>`. Some OpenAI-compatible
   * proxies reuse ids, and LangChain copies them onto message ids.
   */
  completionIds?: "unique" | "constant" | "per-second";
  /**
   * Default true: reject a `messages` history OpenAI would reject (see `historyProblem`) with
   * OpenAI's 400, instead of answering it. A rejected request is recorded with `invalid` set and
   * uses up no scripted turn. Off only for a test that means to send such a history.
   */
  strict?: boolean;
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
  /** Set when strict mode answered 400: the error message sent back. */
  invalid?: string;
}

export interface FakeOpenAI {
  /** Base URL for `OPENAI_BASE_URL` / `configuration.baseURL`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  requests: RecordedRequest[];
  /** Appends turns to the scripted queue. */
  push(...turns: Turn[]): void;
  /** Drops the queued turns no request has taken (a test whose server may not call the model). */
  clearQueue(): void;
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
    const problem = opts.strict === false ? null : findHistoryProblem(body.messages);
    if (problem) rr.invalid = problem.message;
    record(rr);
    if (problem) {
      // Before the script is consulted: OpenAI would never have generated an answer for it.
      return sendJson(res, 400, { error: { message: problem.message, type: "invalid_request_error", param: problem.param, code: null } });
    }
    const turn = queue.shift() ?? scriptFn?.(rr, index) ?? { text: "ok" };
    const calls = "toolCalls" in turn
      ? turn.toolCalls.map((c) => ({ id: c.id ?? `call_${++callCounter}`, name: c.name, args: typeof c.args === "string" ? c.args : JSON.stringify(c.args) }))
      : [];
    const ctx: Ctx = { res, body, id: completionId(opts.completionIds, index), signal: gone.signal, delayMs: opts.delayMs ?? 0 };

    if ("status" in turn) {
      const errBody = turn.body ?? JSON.stringify({ error: { message: `fake-openai scripted ${turn.status}`, type: "server_error", code: null } });
      // Gateways answer 502/504 with their own HTML page; clients must not try to parse it as JSON.
      const type = looksJson(errBody) ? "application/json" : /^\s*</.test(errBody) ? "text/html" : "text/plain";
      res.writeHead(turn.status, { "content-type": type });
      res.end(errBody);
    } else if (body.stream !== true) {
      if ("hang" in turn) return; // never answer; the client's abort ends it
      if ("keepAlive" in turn || "stall" in turn) {
        // SSE comments would corrupt a JSON body, so without `stream` both just stall after the headers.
        res.writeHead(200, { "content-type": "application/json" });
        res.flushHeaders();
        return;
      }
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
    clearQueue: () => void queue.splice(0),
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

/**
 * Why OpenAI would answer this `messages` history with a 400, in OpenAI's own words; null if it
 * would not. Only the tool-call pairing rules, which an agent loop can break by itself (a call
 * left unanswered after a cancel, a result sent twice, a result without its call):
 * - each assistant `tool_calls` entry has an `id` and a `function.name` matching
 *   `^[a-zA-Z0-9_-]{1,64}$`, and no id appears twice in one message;
 * - the tool messages right after that assistant message answer every one of its calls, before
 *   any other role or the end of the list;
 * - a tool message answers a call of the assistant message right before its run of tool messages,
 *   and no call is answered twice.
 */
export function historyProblem(messages: any[]): string | null {
  return findHistoryProblem(messages)?.message ?? null;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `historyProblem` plus the `param` OpenAI names (messages.[i]...), for the 400 body. */
function findHistoryProblem(messages: unknown): { message: string; param: string } | null {
  if (!Array.isArray(messages)) return { message: "Missing required parameter: 'messages'.", param: "messages" };
  // The calls of the assistant message the current run of tool messages answers, if any.
  let open: { at: number; ids: Set<string>; answered: Set<string> } | undefined;
  // `param` names the assistant message whose calls went unanswered: the end of the list has no index.
  const unanswered = () => {
    const missing = [...open!.ids].filter((id) => !open!.answered.has(id));
    if (!missing.length) return null;
    return {
      message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`,
      param: `messages.[${open!.at}].tool_calls`,
    };
  };
  for (const [i, m] of messages.entries()) {
    if (m?.role === "tool") {
      const id = m.tool_call_id;
      if (typeof id !== "string") return { message: `Missing required parameter: 'messages[${i}].tool_call_id'.`, param: `messages.[${i}].tool_call_id` };
      if (!open?.ids.has(id)) {
        return { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: `messages.[${i}].role` };
      }
      if (open.answered.has(id)) {
        return { message: `Invalid parameter: tool_call_id '${id}' in messages[${i}] answers a tool call that already has a response message.`, param: `messages.[${i}].tool_call_id` };
      }
      open.answered.add(id);
      continue;
    }
    // Any other role ends the run of answers: whatever is still open was never answered.
    const problem = open && unanswered();
    if (problem) return problem;
    open = undefined;
    const calls = m?.role === "assistant" && Array.isArray(m.tool_calls) ? m.tool_calls : [];
    if (!calls.length) continue;
    open = { at: i, ids: new Set(), answered: new Set() };
    for (const [j, c] of calls.entries()) {
      const where = `messages[${i}].tool_calls[${j}]`;
      const param = `messages.[${i}].tool_calls.[${j}]`;
      if (typeof c?.id !== "string" || !c.id) return { message: `Missing required parameter: '${where}.id'.`, param: `${param}.id` };
      const name = c.function?.name;
      if (typeof name !== "string" || !TOOL_NAME.test(name)) {
        return {
          message: `Invalid '${where}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.`,
          param: `${param}.function.name`,
        };
      }
      if (open.ids.has(c.id)) return { message: `Invalid parameter: duplicate tool_call id '${c.id}' in '${where}.id'.`, param: `${param}.id` };
      open.ids.add(c.id);
    }
  }
  return open ? unanswered() : null;
}

interface Ctx { res: http.ServerResponse; body: any; id: string; signal: AbortSignal; delayMs: number }
type Call = { id: string; name: string; args: string };

async function streamTurn(ctx: Ctx, turn: Exclude<Turn, { status: number }>, calls: Call[]): Promise<void> {
  const { res, signal } = ctx;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  if ("garbage" in turn) {
    res.end(turn.garbage.split("\n").map((l) => `data: ${l}\n\n`).join(""));
    return;
  }
  if ("stall" in turn) {
    res.flushHeaders(); // else Node holds the headers back until the first body byte, which never comes
    return;
  }
  const chunk = (delta: object, finish_reason: string | null = null) => ({
    ...envelope(ctx, "chat.completion.chunk"),
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  });
  const pieces = !turn.text ? [] : "splitAt" in turn && turn.splitAt ? splitAt(turn.text, turn.splitAt) : splitText(turn.text, "chunkSize" in turn ? turn.chunkSize : undefined);
  // Like OpenAI: the first chunk names the role; LangChain takes the message type from it.
  const frames: object[] = [chunk({ role: "assistant", content: "" }), ...pieces.map((p) => chunk({ content: p }))];
  const noIndex = "noIndex" in turn && turn.noIndex === true;
  calls.forEach((c, i) => {
    // First delta carries index/id/type/name with empty arguments; the arguments follow in pieces.
    const index = noIndex ? {} : { index: i };
    frames.push(chunk({ tool_calls: [{ ...index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const a of splitEven(c.args, 3)) frames.push(chunk({ tool_calls: [{ ...index, function: { arguments: a } }] }));
  });

  if ("hang" in turn) {
    await writeFrames(ctx, frames);
    return; // no end: the response stays open until the client aborts or close() drops it
  }
  if ("keepAlive" in turn) {
    await writeFrames(ctx, frames);
    while (!signal.aborted) {
      // Rejects with AbortError when the client leaves (or close() drops it): the only way out.
      await sleep(turn.everyMs ?? 50, undefined, { signal }).catch(() => undefined);
      if (!signal.aborted) res.write(": keep-alive\n\n");
    }
    return;
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
  return { id: ctx.id, object, created: Math.floor(Date.now() / 1000), model: ctx.body.model ?? "fake", system_fingerprint: "fp_fake" };
}

/** Fixed per response, so every chunk of one answer carries the same id even across a second boundary. */
function completionId(mode: FakeOpenAIOptions["completionIds"], index: number): string {
  if (mode === "constant") return "chatcmpl-constant";
  if (mode === "per-second") return `chatcmpl-${Math.floor(Date.now() / 1000)}`;
  return `chatcmpl-fake-${index}`;
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

/** `text` cut at each of `offsets` (in order), nothing left out. */
function splitAt(text: string, offsets: number[]): string[] {
  const bounds = [0, ...offsets, text.length];
  return bounds.slice(1).map((end, i) => text.slice(bounds[i], end)).filter((p) => p.length > 0);
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
