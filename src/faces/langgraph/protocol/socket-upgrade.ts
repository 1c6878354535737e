import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { Logger } from "../../../logger.js";
import { MAX_SOCKET_MESSAGE_BYTES } from "./socket-bounds.js";
import type { SocketSession, SocketWire } from "./socket-session.js";

/** Where the route that accepts a socket finds how to: a key of the request's `env`. */
export const SOCKET_ACCEPT = Symbol("tollgate.socketAccept");
export type SocketAccept = (open: (wire: SocketWire) => SocketSession) => void;

const PATH = /^\/langgraph\/threads\/[^/]+\/stream\/events$/;

/** The close code a refused upgrade gets, as the SDK reads them: 4000 plus the HTTP status. */
function closeCode(status: number): number {
  return status >= 400 && status < 500 ? 4000 + status : 1011;
}

/**
 * The server's `upgrade` handler for the thread-centric protocol's WebSocket
 * (`GET /langgraph/threads/{id}/stream/events`). The upgrade request goes through the app like
 * any request (host and origin checks, authentication, the thread's visibility: one front door);
 * the route accepts it by handing back the session. A refused upgrade is accepted and closed with
 * 4401, 4403 or 4404. A browser, which cannot set headers on a WebSocket, may send its token as
 * the subprotocol pair `bearer, <token>`.
 */
export function protocolUpgrade(o: { fetch: (req: Request, env: unknown) => Response | Promise<Response>; log: Logger }) {
  // A message past the limit is refused with 1009 as its length is read, before it is buffered.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_SOCKET_MESSAGE_BYTES, handleProtocols: (protocols) => (protocols.has("bearer") ? "bearer" : false) });
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
    if (!PATH.test(url.pathname)) {
      socket.destroy();
      return;
    }
    void (async () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
      if (offered[0] === "bearer" && offered[1] && !headers.has("authorization") && !headers.has("x-api-key")) headers.set("authorization", `Bearer ${offered[1]}`);
      let open: ((wire: SocketWire) => SocketSession) | undefined;
      const accept: SocketAccept = (make) => (open = make);
      let status = 500;
      try {
        status = (await o.fetch(new Request(url, { headers }), { incoming: req, outgoing: undefined, [SOCKET_ACCEPT]: accept })).status;
      } catch (err) {
        o.log.error("protocol socket upgrade failed", { err });
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        if (!open) {
          ws.close(closeCode(status), status === 401 ? "unauthorized" : status === 403 ? "forbidden" : status === 404 ? "not found" : "refused");
          return;
        }
        const session = open({
          send: (text) => new Promise<void>((resolve) => ws.send(text, () => resolve())),
          unsent: () => ws.bufferedAmount,
          pause: () => ws.pause(),
          resume: () => ws.resume(),
          close: (code, reason) => ws.close(code, reason),
        });
        ws.on("message", (data) => void session.onMessage(String(data)));
        ws.on("close", () => session.onClose());
        ws.on("error", () => session.onClose());
      });
    })();
  };
}
