/**
 * The load generator's client: one streamed run over node:http, read with the least work that
 * still sees every frame (split on blank lines, read the `event:` line). The same code reads all
 * three servers, so the client's own cost is the same for each of them.
 */
import http from "node:http";
import { nowUs } from "./clock.js";

export interface StreamResult {
  status: number;
  startUs: number;
  /** When the first token frame arrived; null if none did. */
  firstTokenUs: number | null;
  endUs: number;
  tokens: number;
  /** Tokens that arrived between `windowStartUs` and `windowEndUs`. */
  tokensInWindow: number;
  /** The last frame's event type (tollgate: the terminal event). */
  lastEvent: string | null;
  /** Model send → client receive per token inside the window, ms (only with `stamps`). */
  lags: number[];
  error?: string;
}

export interface StreamOptions {
  agent: http.Agent;
  /** Event type of token frames. */
  tokenEvent: string;
  /** Read the model's send stamp out of each token (` ~<µs base 36>`). */
  stamps?: boolean;
  windowStartUs?: number;
  windowEndUs?: number;
  /** Called when the response headers arrive: the stream is open. */
  onOpen?: (status: number) => void;
  /** Called once, when the first token frame arrives. */
  onFirstToken?: (atUs: number) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
}

const STAMP = /~([0-9a-z]+)/;

/** POSTs `body` to `url` and reads the SSE response to its end. Never rejects. */
export function streamPost(url: string, body: string, o: StreamOptions): Promise<StreamResult> {
  const r: StreamResult = { status: 0, startUs: nowUs(), firstTokenUs: null, endUs: 0, tokens: 0, tokensInWindow: 0, lastEvent: null, lags: [] };
  const windowStart = o.windowStartUs ?? 0;
  const windowEnd = o.windowEndUs ?? Number.POSITIVE_INFINITY;
  return new Promise((resolve) => {
    let settled = false;
    const done = (error?: string) => {
      if (settled) return;
      settled = true;
      r.endUs = nowUs();
      if (error) r.error = error;
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      resolve(r);
    };
    const req = http.request(url, {
      method: "POST",
      agent: o.agent,
      headers: { "content-type": "application/json", accept: "text/event-stream", "content-length": Buffer.byteLength(body) },
    });
    const onAbort = () => {
      req.destroy();
      done("aborted");
    };
    const timer = setTimeout(() => {
      req.destroy();
      done("timeout");
    }, o.timeoutMs ?? 120_000);
    o.signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (e) => done(e.message));
    req.on("response", (res) => {
      r.status = res.statusCode ?? 0;
      o.onOpen?.(r.status);
      res.setEncoding("utf8");
      let buf = "";
      res.on("data", (s: string) => {
        const t = nowUs();
        buf += s;
        let from = 0;
        for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n", from)) {
          const frame = buf.slice(from, end);
          from = end + 2;
          const at = frame.indexOf("event: ");
          if (at < 0) continue; // heartbeat comment
          const nl = frame.indexOf("\n", at);
          const type = frame.slice(at + 7, nl < 0 ? undefined : nl);
          r.lastEvent = type;
          if (type !== o.tokenEvent) continue;
          r.tokens++;
          if (t >= windowStart && t <= windowEnd) r.tokensInWindow++;
          if (r.firstTokenUs === null) {
            r.firstTokenUs = t;
            o.onFirstToken?.(t);
          }
          if (o.stamps && t >= windowStart && t <= windowEnd) {
            const m = STAMP.exec(frame);
            if (m) r.lags.push((t - parseInt(m[1]!, 36)) / 1000);
          }
        }
        buf = buf.slice(from);
      });
      res.on("end", () => done(r.status === 200 ? undefined : `HTTP ${r.status}`));
      res.on("error", (e) => done(e.message));
      res.on("close", () => done("connection closed before the end of the stream"));
    });
    req.end(body);
  });
}
