/**
 * The bench's model: an OpenAI-compatible Chat Completions server that streams as fast as it is
 * asked. Run as its own process (`node --import tsx bench/model-server.ts`); prints
 * `model listening on http://127.0.0.1:<port>`.
 *
 * What to do is read from the last user message, `bench:{json}` (see `./directive.ts`). Every content
 * token is ` ~<µs>` in base 36: the monotonic clock (shared by all processes on the machine) read
 * just before the token was written, so a client can tell how long the token took to reach it.
 * `GET /_bench/closed/<id>` answers when the client of request `<id>` went away mid-stream.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setImmediate as yieldLoop, setTimeout as sleep } from "node:timers/promises";
import { nowUs } from "./clock.js";
import { parseDirective } from "./directive.js";

const CLOSE_WAIT_MS = 5000;
const closedAt = new Map<string, number>();
const closeWaiters = new Map<string, (t: number) => void>();
let served = 0;
let callSeq = 0;

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url?.startsWith("/_bench/closed/")) return waitClosed(decodeURIComponent(req.url.slice(15)), res);
  if (req.method === "GET" && req.url === "/_bench/stats") return json(res, 200, { served, tracked: closedAt.size });
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (s: string) => (raw += s));
  req.on("end", () => {
    served++;
    let body: { messages?: Array<{ role: string; content: unknown }>; model?: string; stream_options?: { include_usage?: boolean } };
    try {
      body = JSON.parse(raw);
    } catch {
      return json(res, 400, { error: { message: "body is not JSON", type: "invalid_request_error" } });
    }
    void answer(body, res).catch((err: unknown) => {
      console.error("model-server: answer failed", err);
      res.destroy();
    });
  });
});

async function answer(
  body: { messages?: Array<{ role: string; content: unknown }>; model?: string; stream_options?: { include_usage?: boolean } },
  res: http.ServerResponse,
): Promise<void> {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const d = parseDirective(textOf(lastUser?.content));
  // After a tool result the model sums up in a few tokens: the end of a resumed run.
  const afterTool = last?.role === "tool";
  const mode = afterTool ? "text" : (d.mode ?? "text");
  const tokens = afterTool ? 3 : Math.max(0, d.tokens ?? 16);
  const delay = afterTool ? 0 : (d.delay ?? 0);

  let ended = false;
  res.once("close", () => {
    if (ended || !d.id) return;
    const t = nowUs();
    closedAt.set(d.id, t);
    closeWaiters.get(d.id)?.(t);
    closeWaiters.delete(d.id);
  });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const head = `data: {"id":"chatcmpl-bench-${served}","object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":"${body.model ?? "fake"}","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":`;
  const frame = (delta: string, finish: string | null = null) =>
    `${head}${delta},"logprobs":null,"finish_reason":${finish === null ? "null" : `"${finish}"`}}]}\n\n`;

  res.write(frame(`{"role":"assistant","content":""}`));
  if (mode === "refund") {
    const args = JSON.stringify(JSON.stringify({ order_id: "A-1001", amount_cents: 100, reason: "bench" }));
    res.write(frame(`{"tool_calls":[{"index":0,"id":"call_b${++callSeq}","type":"function","function":{"name":"refund_order","arguments":""}}]}`));
    res.write(frame(`{"tool_calls":[{"index":0,"function":{"arguments":${args}}}]}`));
    return finish(res, frame(`{}`, "tool_calls"), body, () => (ended = true));
  }
  for (let i = 0; i < tokens; i++) {
    if (res.destroyed) return;
    if (i === 1 && d.firstGap) await sleep(d.firstGap);
    else if (delay > 0 && i > 0) await sleep(delay);
    else if (i % 16 === 15) await yieldLoop(); // let the other streams have their turn
    if (res.destroyed) return;
    const ok = res.write(frame(`{"content":" ~${nowUs().toString(36)}"}`));
    if (!ok) await new Promise<void>((r) => { res.once("drain", r); res.once("close", r); });
  }
  if (mode === "hang") return; // open until the client goes away
  finish(res, frame(`{}`, "stop"), body, () => (ended = true));
}

function finish(res: http.ServerResponse, last: string, body: { stream_options?: { include_usage?: boolean } }, markEnded: () => void): void {
  if (res.destroyed) return;
  markEnded();
  let tail = last;
  if (body.stream_options?.include_usage) {
    tail += `data: {"id":"chatcmpl-bench-${served}","object":"chat.completion.chunk","created":0,"model":"fake","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}\n\n`;
  }
  res.end(`${tail}data: [DONE]\n\n`);
}

function waitClosed(id: string, res: http.ServerResponse): void {
  const known = closedAt.get(id);
  if (known !== undefined) {
    closedAt.delete(id);
    return json(res, 200, { closedAt: known });
  }
  const timer = setTimeout(() => {
    closeWaiters.delete(id);
    json(res, 200, { closedAt: null });
  }, CLOSE_WAIT_MS);
  closeWaiters.set(id, (t) => {
    clearTimeout(timer);
    closedAt.delete(id);
    json(res, 200, { closedAt: t });
  });
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("");
  return "";
}

function json(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`model listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
