/**
 * Closed-loop load through LangGraph's JS SDK (`@langchain/langgraph-sdk`'s `Client`), for the
 * servers that speak LangGraph's API: each of `concurrency` clients creates a thread, streams one
 * run on it and reads it to its end, then starts the next, until the window closes. The run is
 * streamed the run-centric way (`runs.stream`, `streamMode: "messages-tuple"`) or the
 * thread-centric way (`threads.stream()`'s `ThreadStream`: `run.start`, then its events). The window's rules are load.ts's (ramp, drain, what counts inside it), so a
 * `LoadWindow` from here reads like one from there; only the client differs, and it is the same
 * for both servers.
 */
import { setMaxListeners } from "node:events";
import { Client } from "@langchain/langgraph-sdk";
import { nowUs } from "./clock.js";
import { cpuMeters, type LoadWindow, windowOf } from "./load.js";
import type { Child } from "./processes.js";
import type { StreamResult } from "./sse-client.js";

export async function sdkClosedLoop(
  apiUrl: string,
  server: Child,
  concurrency: number,
  windowMs: number,
  message: () => string,
  o: { rampMs?: number; drainMs?: number; watch?: Record<string, () => number>; protocol?: SdkProtocol } = {},
): Promise<LoadWindow> {
  const one = o.protocol === "thread" ? threadStreamOne : streamOne;
  const read = cpuMeters(() => server.cpuSeconds(), o.watch);
  const ramp = o.rampMs ?? 0;
  let cpuStart = read();
  let cpuEnd: Record<string, number> | undefined;
  const start = nowUs() + ramp * 1000;
  const end = start + windowMs * 1000;
  const openWindow = setTimeout(() => (cpuStart = read()), ramp);
  const closeWindow = setTimeout(() => (cpuEnd = read()), ramp + windowMs);
  // Runs still going when the window closes are read to their end, but not forever.
  const cut = new AbortController();
  setMaxListeners(0, cut.signal); // one listener per request in flight
  const stopDraining = setTimeout(() => cut.abort(), ramp + windowMs + (o.drainMs ?? 60_000));
  const runs: StreamResult[] = [];
  const client = async () => {
    // One Client per stream, as each browser tab or backend worker has its own: it never has more
    // than one request out, so the SDK's queue (4 at a time per Client) never holds one back.
    // No retries: an error answer must show as an error, not as a slow run. `apiKey: null`: no
    // x-api-key header from a LANGSMITH_API_KEY that happens to be in the environment.
    const sdk = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
    while (nowUs() < end) runs.push(await one(sdk, message(), start, end, cut.signal));
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  clearTimeout(openWindow);
  clearTimeout(closeWindow);
  clearTimeout(stopDraining);
  cpuEnd ??= read();
  return windowOf({ concurrency, windowMs, runs, start, end, cpuStart, cpuEnd });
}

/**
 * One thread, one streamed run. A token is a `messages` part whose message has content: PEER also
 * sends parts with none (the model's role chunk first, its finish and usage chunks last), and at
 * the node's end the whole answer once more as one message, which counts (one per run). TTFT runs
 * from the `runs.stream` call (the thread already made) to the first token. Never rejects: an
 * HTTP error keeps its status and body (the SDK's `HTTP <status>: <body>`), an `error` event its data.
 */
async function streamOne(sdk: Client, text: string, windowStart: number, windowEnd: number, signal: AbortSignal): Promise<StreamResult> {
  const r: StreamResult = { status: 0, startUs: nowUs(), firstTokenUs: null, endUs: 0, tokens: 0, tokensInWindow: 0, lastEvent: null, lags: [] };
  try {
    const { thread_id } = await sdk.threads.create({ signal });
    r.startUs = nowUs();
    const parts = sdk.runs.stream(thread_id, "agent", {
      input: { messages: [{ type: "human", content: text }] },
      streamMode: "messages-tuple",
      signal,
    });
    for await (const part of parts) {
      const t = nowUs();
      r.status = 200;
      r.lastEvent = part.event;
      if (part.event === "error") r.error = `error event: ${JSON.stringify(part.data).slice(0, 300)}`;
      if (part.event !== "messages" || !hasContent((part.data as unknown[])[0])) continue;
      countToken(r, { at: t, windowStart, windowEnd });
    }
    // The SDK ends the loop quietly when its signal aborts.
    if (signal.aborted) r.error = "aborted";
  } catch (err) {
    failed(r, { err, signal });
  }
  r.endUs = nowUs();
  return r;
}

/**
 * One thread, one run through `ThreadStream`: subscribed before `run.start` (as `useStream` does),
 * read to the root's end. A token is a text delta on `messages`, or, from PEER, where the demo
 * graph's tokens travel as its writer's chunks, a `custom` event carrying one. TTFT runs from
 * `run.start` to the first one. Never rejects, like `streamOne`.
 */
async function threadStreamOne(sdk: Client, text: string, windowStart: number, windowEnd: number, signal: AbortSignal): Promise<StreamResult> {
  const r: StreamResult = { status: 0, startUs: nowUs(), firstTokenUs: null, endUs: 0, tokens: 0, tokensInWindow: 0, lastEvent: null, lags: [] };
  const thread = sdk.threads.stream({ assistantId: "agent" });
  const stop = () => void thread.close();
  signal.addEventListener("abort", stop, { once: true });
  try {
    const events = await thread.subscribe(["messages", "lifecycle", "custom"]);
    r.startUs = nowUs();
    await thread.run.start({ input: { messages: [{ type: "human", content: text }] } });
    r.status = 200;
    for await (const e of events as AsyncIterable<{ method: string; params: { namespace: string[]; data: any } }>) {
      const t = nowUs();
      r.lastEvent = e.method;
      if (e.method === "lifecycle" && e.params.namespace.length === 0 && ["completed", "failed", "interrupted"].includes(e.params.data.event)) {
        if (e.params.data.event === "failed") r.error = `failed: ${String(e.params.data.error).slice(0, 300)}`;
        break;
      }
      if (!isTokenEvent(e)) continue;
      countToken(r, { at: t, windowStart, windowEnd });
    }
    if (signal.aborted) r.error = "aborted";
  } catch (err) {
    failed(r, { err, signal });
  } finally {
    signal.removeEventListener("abort", stop);
    await thread.close();
  }
  r.endUs = nowUs();
  return r;
}

/** A token read at `at`: counted, and counted in the window if it falls inside. */
function countToken(r: StreamResult, o: { at: number; windowStart: number; windowEnd: number }): void {
  r.tokens++;
  if (o.at >= o.windowStart && o.at <= o.windowEnd) r.tokensInWindow++;
  r.firstTokenUs ??= o.at;
}

/** A run that failed: its HTTP status when it had one, and what went wrong ("aborted" when the window was cut). */
function failed(r: StreamResult, o: { err: unknown; signal: AbortSignal }): void {
  const e = o.err as { status?: number; message?: string };
  r.status = e.status ?? r.status;
  r.error = o.signal.aborted ? "aborted" : String(e.message ?? o.err).slice(0, 300);
}

function isTokenEvent(e: { method: string; params: { data: any } }): boolean {
  const d = e.params.data;
  if (e.method === "messages") return d?.event === "content-block-delta" && typeof d.delta?.text === "string" && d.delta.text.length > 0;
  return e.method === "custom" && typeof d?.payload?.token === "string";
}

/** How the SDK streams a run: `runs.stream` (run-centric) or `ThreadStream` (thread-centric). */
export type SdkProtocol = "runs" | "thread";

function hasContent(message: unknown): boolean {
  const content = (message as { content?: unknown } | undefined)?.content;
  return typeof content === "string" ? content.length > 0 : Array.isArray(content) && content.length > 0;
}
