import type { Principal } from "../../auth/index.js";
import type { AppDeps } from "../../http/index.js";
import type { Logger } from "../../logger.js";
import { AppError } from "../../protocol/index.js";
import { answerCommand, commandBody } from "./commands.js";
import { channelOf, type StreamItem } from "./protocol-event.js";
import { threadEvents } from "./thread-events.js";

/** What the session writes to: the socket, as JSON text; and how it closes it. */
export interface SocketWire {
  send(text: string): void;
  close(code: number, reason: string): void;
}

export interface SocketSessionOptions {
  deps: Pick<AppDeps, "runs" | "threads">;
  principal: Principal;
  threadId: string;
  wire: SocketWire;
  log: Logger;
}

/**
 * The thread-centric protocol over one WebSocket: commands and events on one wire. Each
 * `subscription.subscribe` is answered first, then replays and follows the thread as an SSE stream
 * would (the latest run from its start, or after `since`), across runs, until it is unsubscribed
 * or the socket closes. Every other command is answered as `POST …/commands` answers it.
 */
export class SocketSession {
  private readonly subscriptions = new Map<string, AbortController>();
  private closed = false;

  constructor(private readonly o: SocketSessionOptions) {}

  async onMessage(text: string): Promise<void> {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return this.send({ type: "error", id: null, error: "invalid_argument", message: "Protocol commands must be valid JSON." });
    }
    const parsed = commandBody.safeParse(raw);
    if (!parsed.success) return this.send({ type: "error", id: null, error: "invalid_argument", message: "Protocol commands must include an integer id and a string method." });
    const cmd = parsed.data;
    const context = { deps: this.o.deps, principal: this.o.principal, threadId: this.o.threadId };
    try {
      if (cmd.method === "subscription.unsubscribe") {
        const id = cmd.params?.subscription_id;
        const sub = typeof id === "string" ? this.subscriptions.get(id) : undefined;
        if (!sub) return this.send({ type: "error", id: cmd.id, error: "no_such_subscription", message: "Unknown subscription." });
        sub.abort();
        this.subscriptions.delete(id as string);
      }
      const answer = await answerCommand(context, cmd);
      this.send(answer);
      if (cmd.method === "subscription.subscribe" && answer.type === "success") this.follow(String(answer.result.subscription_id), cmd.params ?? {});
    } catch (err) {
      // What the HTTP face answers with a status (the thread vanished from view, rate limits) ends the socket as the SDK reads it.
      if (err instanceof AppError && err.code === "thread_not_found") return this.close(4404, "thread not found");
      if (err instanceof AppError && err.code === "rate_limited") return this.close(4429, "rate limited");
      this.o.log.error("protocol command failed", { thread_id: this.o.threadId, err });
      this.send({ type: "error", id: cmd.id, error: "unknown_error", message: "The command failed." });
    }
  }

  /** The socket closed: every subscription stops. */
  onClose(): void {
    this.closed = true;
    for (const sub of this.subscriptions.values()) sub.abort();
    this.subscriptions.clear();
  }

  private follow(id: string, params: Record<string, unknown>): void {
    const stop = new AbortController();
    this.subscriptions.set(id, stop);
    const channels = new Set(Array.isArray(params.channels) ? params.channels.map(String) : []);
    const since = typeof params.since === "number" && Number.isInteger(params.since) && params.since >= 0 ? params.since : undefined;
    const wanted = (e: StreamItem) => e.type === "error" || channels.has(channelOf(e.method));
    void (async () => {
      try {
        for await (const batch of threadEvents({ feed: this.o.deps.runs.feed, threads: this.o.deps.threads, principal: this.o.principal, threadId: this.o.threadId, since, signal: stop.signal })) {
          for (const e of batch) if (wanted(e)) this.send(e);
        }
      } catch (err) {
        if (err instanceof AppError && err.code === "thread_not_found") return this.close(4404, "thread not found");
        this.o.log.error("protocol subscription failed", { thread_id: this.o.threadId, err });
        this.close(1011, "subscription failed");
      }
    })();
  }

  private send(message: unknown): void {
    if (!this.closed) this.o.wire.send(JSON.stringify(message));
  }

  private close(code: number, reason: string): void {
    if (this.closed) return;
    this.onClose();
    this.o.wire.close(code, reason);
  }
}
