import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { encodeFrame, type ProtocolEvent } from "../../../src/protocol/index.js";

/** A request as the test server saw it, with a promise for when its connection closed. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  closed: Promise<void>;
}

export type Handler = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

export interface TestServer {
  baseUrl: string;
  requests: SeenRequest[];
  /** Resolves with the n-th request (0-based) once it has arrived. */
  request(n: number): Promise<SeenRequest>;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1, port 0; the handler runs after the body has been read. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const waiters = new Map<number, (r: SeenRequest) => void>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen: SeenRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
      closed: new Promise((resolve) => res.once("close", () => resolve())),
    };
    requests.push(seen);
    waiters.get(requests.length - 1)?.(seen);
    await handler(seen, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    request: (n) =>
      requests[n] ? Promise.resolve(requests[n]) : new Promise((resolve) => waiters.set(n, resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
}

export function sendJsonError(res: ServerResponse, status: number, code: string, message = code): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code, message } }));
}

/** Writes and waits until the bytes are handed to the socket. */
export function write(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
}

/** A scripted run: `count - 1` events (tokens and a tool round trip) and a final `done`. */
export function scriptedRun(runId: string, count: number): ProtocolEvent[] {
  const texts = ["héllo ", "wörld ", "🌍 ", "日本語 ", "plain ", "€uro "];
  const events: ProtocolEvent[] = [];
  for (let i = 0; i < count - 1; i++) {
    if (i % 50 === 10) {
      events.push({ type: "tool_call", run_id: runId, call_id: `c${i}`, name: "lookup_order", args: { order_id: "A-1001" }, needs_approval: false });
    } else if (i % 50 === 11) {
      events.push({ type: "tool_result", run_id: runId, call_id: `c${i - 1}`, name: "lookup_order", status: "ok", output: "{\"status\":\"shipped\"}" });
    } else {
      events.push({ type: "token", run_id: runId, text: `${texts[i % texts.length]}${i}` });
    }
  }
  events.push({ type: "done", run_id: runId, outcome: "completed", message: "bye" });
  return events;
}

/** The SSE bytes of each event, numbered from 0 as the server would send them. */
export function framesOf(events: ProtocolEvent[]): Buffer[] {
  return events.map((event, seq) => Buffer.from(encodeFrame(seq, event), "utf8"));
}

export { mulberry32 } from "../../helpers/random.js";
