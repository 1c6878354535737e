/**
 * A real HTTP receiver for approval webhooks, on a socket: records every request (raw body,
 * headers) and answers as the test says: a status, or `"stall"` (never answers until closed).
 */
import http from "node:http";
import type net from "node:net";

export interface ReceivedWebhook {
  delivery: string;
  signature: string;
  contentType: string;
  raw: string;
  body: any;
  /** What the receiver answered (`stall`: nothing). */
  answer: number | "stall";
}

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, in arrival order. */
  received: ReceivedWebhook[];
  /** Requests answered 2xx, in order: what counts as delivered. */
  delivered(): ReceivedWebhook[];
  /** Requests still held open by `stall`. */
  stalled(): number;
  /** How to answer the next requests (default 204). */
  answer: (w: Omit<ReceivedWebhook, "answer">) => number | "stall";
  /** Polls until `pred` holds (or throws after `ms`). */
  waitFor<T>(pred: () => T | undefined | false, ms?: number, what?: string): Promise<T>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const held = new Set<http.ServerResponse>();
  const sockets = new Set<net.Socket>();
  const r: WebhookReceiver = {
    url: "",
    port: 0,
    received,
    delivered: () => received.filter((w) => typeof w.answer === "number" && w.answer >= 200 && w.answer < 300),
    stalled: () => held.size,
    answer: () => 204,
    async waitFor(pred, ms = 15_000, what = "condition") {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = pred();
        if (v) return v;
        if (Date.now() > deadline) throw new Error(`webhook receiver: timed out waiting for ${what}; got ${JSON.stringify(received.map((w) => [w.body?.type, w.answer]))}`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const w = {
        delivery: String(req.headers["x-tollgate-delivery"] ?? ""),
        signature: String(req.headers["x-tollgate-signature"] ?? ""),
        contentType: String(req.headers["content-type"] ?? ""),
        raw,
        body,
      };
      const answer = r.answer(w);
      received.push({ ...w, answer });
      if (answer === "stall") {
        held.add(res);
        res.on("close", () => held.delete(res));
        return;
      }
      res.writeHead(answer).end();
    });
  });
  server.on("connection", (s) => (sockets.add(s), s.on("close", () => sockets.delete(s))));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  r.port = (server.address() as net.AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hooks`;
  return r;
}
