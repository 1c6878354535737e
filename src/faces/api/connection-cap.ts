import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { type Clock, systemClock } from "../../clock.js";
import type { Logger } from "../../logger.js";

/** How often a summary of evicted connections is logged, at most. */
const LOG_EVERY_MS = 10_000;

/**
 * Caps open connections at `max` without letting a flood lock everyone out. Node's own
 * `maxConnections` refuses the *new* connection, so 4,096 half-open uploads would keep `/healthz`
 * and every real client out until they time out. Instead, when the cap is reached, the oldest
 * connection that is not serving a fully received request (idle keep-alive, headers or body still
 * arriving) is closed to make room; a stream being answered is never cut. Only when every
 * connection is such a stream is the newcomer refused.
 */
export function capConnections(server: Server, o: { max: number; log: Logger; clock?: Clock }): void {
  const { max, log, clock = systemClock } = o;
  // Insertion order = age, so the first evictable one found is the oldest.
  const open = new Set<Socket>();
  const answering = new WeakMap<Socket, number>();
  let evicted = 0;
  let lastLog = 0;

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    // Received in full: from now on the connection is serving someone. A request that declares no
    // body (a GET stream) is complete with its headers; Node only says `end` once it is read.
    let started = false;
    const start = () => {
      started = true;
      answering.set(socket, (answering.get(socket) ?? 0) + 1);
    };
    const declaresBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (!declaresBody || req.complete) start();
    else req.once("end", start);
    res.once("close", () => {
      req.off("end", start);
      if (started) answering.set(socket, Math.max(0, (answering.get(socket) ?? 1) - 1));
    });
  });

  server.on("connection", (socket: Socket) => {
    if (open.size >= max) {
      let victim: Socket | undefined;
      for (const s of open) {
        if (!answering.get(s)) {
          victim = s;
          break;
        }
      }
      (victim ?? socket).destroy();
      evicted++;
      if (clock.now() - lastLog > LOG_EVERY_MS) {
        lastLog = clock.now();
        log.warn("connection cap reached; closed the oldest idle or half-open connections", { max, closed: evicted });
        evicted = 0;
      }
      if (!victim) return;
    }
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
}
