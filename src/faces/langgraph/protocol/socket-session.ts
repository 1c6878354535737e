import type { Principal } from "../../../auth/index.js";
import type { AppDeps } from "../../../http/index.js";
import type { Logger } from "../../../logger.js";
import { AppError, refusals } from "../../../protocol/index.js";
import { answerCommand, commandBody, errorAnswer } from "./commands.js";
import { runSeq, type StreamItem } from "./protocol-event.js";
import { CLOSE_TRY_AGAIN_LATER, MAX_SUBSCRIPTIONS, MAX_UNSENT_BYTES, STALLED_AFTER_MS } from "./socket-bounds.js";
import { SocketSubscriptions } from "./socket-subscriptions.js";
import { filterOf } from "./stream-filter.js";
import { threadEvents } from "./thread-events.js";
import { mayFollow } from "./thread-visibility.js";

/** What the session writes to: the socket, as JSON text (resolved once written out); what it holds unsent; reading commands paused and resumed; closing it. */
export interface SocketWire {
  send(text: string): Promise<void>;
  unsent(): number;
  pause(): void;
  resume(): void;
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
 *
 * One reader feeds every subscription, so the socket carries the thread's events in seq order,
 * each once: the SDK pauses its other subscriptions at a run's terminal lifecycle event, and an
 * earlier event sent after it by a reader of its own would be lost to them. A new subscription
 * that asks for more than the others starts the reader again from the earliest seq any
 * subscription still needs, and gets only what the socket has not carried (`SocketSubscriptions`).
 *
 * Bounded (`socket-bounds.ts`): at most {@link MAX_SUBSCRIPTIONS} subscriptions. Past
 * {@link MAX_UNSENT_BYTES} unsent, the reader waits and commands are not read until they have
 * gone, so a slow reader only slows its socket; one that lets nothing go for
 * {@link STALLED_AFTER_MS} is closed with 1013. Every message it did get is whole, so the client
 * resumes with `since` and misses nothing.
 */
export class SocketSession {
  private readonly subscriptions = new SocketSubscriptions();
  /** Subscribes answered and not yet following: they count against the limit too. */
  private opening = 0;
  private reader: AbortController | undefined;
  /** While the socket holds more than it may: resolves once it has let it go, or is closed. */
  private draining: Promise<void> | undefined;
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
    const subscribing = cmd.method === "subscription.subscribe";
    if (subscribing && this.subscriptions.size + this.opening >= MAX_SUBSCRIPTIONS) {
      return this.send(errorAnswer(cmd.id, refusals.tooManySubscriptions(MAX_SUBSCRIPTIONS)));
    }
    if (subscribing) this.opening++;
    try {
      if (cmd.method === "subscription.unsubscribe") {
        const id = cmd.params?.subscription_id;
        if (typeof id !== "string" || !this.subscriptions.delete(id)) return this.send({ type: "error", id: cmd.id, error: "no_such_subscription", message: "Unknown subscription." });
        if (!this.subscriptions.size) this.stopReading();
      }
      const answer = await answerCommand(context, cmd);
      await this.send(answer);
      if (subscribing && answer.type === "success") await this.follow(String(answer.result.subscription_id), cmd.params ?? {});
    } catch (err) {
      this.fail(err, cmd.id);
    } finally {
      if (subscribing) this.opening--;
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
    // Without `since`: the latest run from its first event (the first run's, before there is one,
    // and on a thread the caller may not see, which must follow as an id never used does).
    const visible = since === undefined && (await mayFollow(this.o.deps.runs.feed, this.o.principal, this.o.threadId));
    const latest = visible ? await this.o.deps.runs.feed.latestRun(this.o.threadId) : undefined;
    const from = since ?? runSeq({ ordinal: latest?.ordinal ?? 1, loggedSeq: -1, k: 0 }) - 1;
    if (this.closed) return;
    if (this.subscriptions.add(id, filterOf(params), from)) this.read();
  }

  /** (Re)starts the one reader, from the earliest seq a subscription still needs. */
  private read(): void {
    this.stopReading();
    const stop = new AbortController();
    this.reader = stop;
    void (async () => {
      try {
        for await (const batch of threadEvents({
          feed: this.o.deps.runs.feed,
          threads: this.o.deps.threads,
          principal: this.o.principal,
          threadId: this.o.threadId,
          since: this.subscriptions.earliest(),
          signal: stop.signal,
          wants: (channel) => this.subscriptions.wantsChannel(channel),
        })) {
          // A reader started again since has these events too: only the current one sends.
          if (stop.signal.aborted) return;
          for (const e of batch) {
            if (this.subscriptions.pass(e)) await this.send(e);
            if (stop.signal.aborted) return;
          }
        }
      } catch (err) {
        if (!stop.signal.aborted) this.fail(err, null);
      }
    })();
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
    void this.send({ type: "error", id: commandId, error: "unknown_error", message: "The command failed." });
  }

  /** Sends; past the bound, resolves only once the socket has let its unsent data go (or is closed). */
  private send(message: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    const written = this.o.wire.send(JSON.stringify(message));
    if (this.o.wire.unsent() <= MAX_UNSENT_BYTES) return Promise.resolve();
    return (this.draining ??= this.drain(written));
  }

  /** Waits, reading no commands, for what is written to go; a socket that lets nothing go meanwhile is closed with 1013. */
  private async drain(written: Promise<void>): Promise<void> {
    this.o.wire.pause();
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STALLED_AFTER_MS)));
    try {
      if (await Promise.race([written.then(() => false), stalled])) {
        this.o.log.warn("protocol socket closed: its reader does not read", { thread_id: this.o.threadId, unsent_bytes: this.o.wire.unsent() });
        this.close(CLOSE_TRY_AGAIN_LATER, "reader too slow: reconnect with since");
      }
    } finally {
      clearTimeout(timer);
      this.draining = undefined;
      if (!this.closed) this.o.wire.resume();
    }
  }

  private close(code: number, reason: string): void {
    if (this.closed) return;
    this.onClose();
    // Reading again: the client's answer to the close ends the socket.
    this.o.wire.resume();
    this.o.wire.close(code, reason);
  }
}
