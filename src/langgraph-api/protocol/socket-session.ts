import type { Principal } from "../../auth/index.js";
import type { AppDeps } from "../../http/index.js";
import type { Logger } from "../../logger.js";
import { AppError } from "../../protocol/index.js";
import { answerCommand, commandBody } from "./commands.js";
import { runSeq, type StreamItem } from "./protocol-event.js";
import { filterOf, type StreamFilter, wants } from "./stream-filter.js";
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

/** A subscription on the socket: what it asked for, and the seq up to which it has had everything. */
interface Subscription {
  filter: StreamFilter;
  after: number;
}

/**
 * The thread-centric protocol over one WebSocket: commands and events on one wire. Each
 * `subscription.subscribe` is answered first, then replays and follows the thread as an SSE stream
 * would (the latest run from its start, or after `since`), across runs, until it is unsubscribed
 * or the socket closes. Every other command is answered as `POST …/commands` answers it.
 *
 * One reader feeds every subscription, so the socket carries the thread's events in seq order,
 * each once: the SDK pauses its other subscriptions at a run's terminal lifecycle event, and an
 * earlier event sent after it by a reader of its own would be lost to them. A new subscription
 * starts the reader again from the earliest seq any subscription still needs; the others skip
 * what they have had.
 */
export class SocketSession {
  private readonly subscriptions = new Map<string, Subscription>();
  private reader: AbortController | undefined;
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
        if (typeof id !== "string" || !this.subscriptions.delete(id)) return this.send({ type: "error", id: cmd.id, error: "no_such_subscription", message: "Unknown subscription." });
        if (!this.subscriptions.size) this.stopReading();
      }
      const answer = await answerCommand(context, cmd);
      this.send(answer);
      if (cmd.method === "subscription.subscribe" && answer.type === "success") await this.follow(String(answer.result.subscription_id), cmd.params ?? {});
    } catch (err) {
      this.fail(err, cmd.id);
    }
  }

  /** The socket closed: every subscription stops. */
  onClose(): void {
    this.closed = true;
    this.subscriptions.clear();
    this.stopReading();
  }

  private async follow(id: string, params: Record<string, unknown>): Promise<void> {
    const since = typeof params.since === "number" && Number.isInteger(params.since) && params.since >= 0 ? params.since : undefined;
    // Without `since`: the latest run from its first event (the first run's, before there is one).
    const latest = since === undefined ? await this.o.deps.runs.feed.latestRun(this.o.threadId) : undefined;
    const after = since ?? runSeq({ ordinal: latest?.ordinal ?? 1, loggedSeq: -1, k: 0 }) - 1;
    if (this.closed) return;
    this.subscriptions.set(id, { filter: filterOf(params), after });
    this.read();
  }

  /** (Re)starts the one reader, from the earliest seq a subscription still needs. */
  private read(): void {
    this.stopReading();
    const stop = new AbortController();
    this.reader = stop;
    const since = Math.min(...[...this.subscriptions.values()].map((s) => s.after));
    void (async () => {
      try {
        for await (const batch of threadEvents({
          feed: this.o.deps.runs.feed,
          threads: this.o.deps.threads,
          principal: this.o.principal,
          threadId: this.o.threadId,
          since,
          signal: stop.signal,
          wants: (channel) => [...this.subscriptions.values()].some((s) => s.filter.channels.has(channel)),
        })) {
          // A reader started again since has these events too: only the current one sends.
          if (stop.signal.aborted) return;
          for (const e of batch) this.fanOut(e);
        }
      } catch (err) {
        if (!stop.signal.aborted) this.fail(err, null);
      }
    })();
  }

  /** Sends an event once if any subscription has not had it and asked for it; each that had not has it now. */
  private fanOut(e: StreamItem): void {
    const seq = e.type === "event" ? e.seq : e.tollgate.to_seq;
    let wanted = false;
    for (const sub of this.subscriptions.values()) {
      if (seq <= sub.after) continue;
      sub.after = seq;
      wanted ||= wants(sub.filter, e);
    }
    if (wanted) this.send(e);
  }

  private stopReading(): void {
    this.reader?.abort();
    this.reader = undefined;
  }

  /** What the HTTP face answers with a status (the thread vanished from view, rate limits) ends the socket as the SDK reads it. */
  private fail(err: unknown, commandId: number | null): void {
    if (err instanceof AppError && err.code === "thread_not_found") return this.close(4404, "thread not found");
    if (err instanceof AppError && err.code === "rate_limited") return this.close(4429, "rate limited");
    if (commandId === null) {
      this.o.log.error("protocol subscription failed", { thread_id: this.o.threadId, err });
      return this.close(1011, "subscription failed");
    }
    this.o.log.error("protocol command failed", { thread_id: this.o.threadId, err });
    this.send({ type: "error", id: commandId, error: "unknown_error", message: "The command failed." });
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
