import { Hono } from "hono";
import { z } from "zod";
import { type AppDeps, parseBody, principalOf, sseResponse, threadParam } from "../../../http/index.js";
import { refusals } from "../../../protocol/index.js";
import { answerCommand, commandBody } from "./commands.js";
import { SocketSession } from "./socket-session.js";
import { SOCKET_ACCEPT, type SocketAccept } from "./socket-upgrade.js";
import type { StreamItem } from "./protocol-event.js";
import { filterOf, wants } from "./stream-filter.js";
import { threadEvents } from "./thread-events.js";

/** The body of `POST /threads/{id}/stream/events`: which events this stream carries, and from where. */
export const streamBody = z
  .object({
    channels: z.array(z.string().max(200)).min(1).max(50),
    namespaces: z.array(z.array(z.string().max(200)).max(20)).max(50).optional(),
    depth: z.number().int().nonnegative().optional(),
    since: z.number().int().nonnegative().optional(),
  })
  .strict();

/**
 * LangGraph's thread-centric protocol under `/langgraph`: one command per `POST …/commands`, and
 * `POST …/stream/events`, an SSE stream of the thread's events that stays open across runs.
 */
export function protocolRoutes(deps: AppDeps): Hono {
  const app = new Hono();

  app.post("/:thread_id/commands", async (c) => {
    const cmd = await parseBody(c, commandBody);
    return c.json(await answerCommand({ deps, principal: principalOf(c), threadId: threadParam(c) }, cmd));
  });

  app.post("/:thread_id/stream/events", async (c) => {
    const filter = await parseBody(c, streamBody);
    const principal = principalOf(c);
    const threadId = threadParam(c);
    // Opened on an id with no thread yet, or on a thread the caller may not see, the stream is
    // accepted and waits alike: its answer tells nothing about other people's threads.
    const asked = filterOf(filter);
    const wanted = (e: StreamItem) => wants(asked, e);
    return sseResponse<StreamItem>({
      threadId,
      events: (signal) => threadEvents({ feed: deps.runs.feed, threads: deps.threads, principal, threadId, since: filter.since, signal, wants: (channel) => asked.channels.has(channel) }),
      clientSignal: c.req.raw.signal,
      heartbeatMs: deps.heartbeatMs,
      log: deps.log,
      encode: (batch) => batch.filter(wanted).map(frame).join(""),
    });
  });

  // The WebSocket: the upgrade came through the server's `upgrade` handler, which accepts it
  // once this route has (the app's checks and authentication ran first).
  app.get("/:thread_id/stream/events", async (c) => {
    const accept = (c.env as Record<symbol, SocketAccept | undefined> | undefined)?.[SOCKET_ACCEPT];
    if (!accept) throw refusals.upgradeOnly();
    const principal = principalOf(c);
    const threadId = threadParam(c);
    // As the SSE stream: accepted whether or not there is a thread the caller may see.
    accept((wire) => new SocketSession({ deps, principal, threadId, wire, log: deps.log }));
    return c.body(null, 200);
  });

  return app;
}

function frame(e: StreamItem): string {
  if (e.type === "error") return `event: error\ndata: ${JSON.stringify(e)}\n\n`;
  return `id: ${e.event_id}\nevent: ${e.method}\ndata: ${JSON.stringify(e)}\n\n`;
}
