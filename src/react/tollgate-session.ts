import { TollgateClient, TollgateError, type EventStream, type TokenSource } from "../client/index.js";
import type { Decision, InterruptPayload, LastOutcome, ProtocolEvent, ThreadMessage, ThreadView } from "../protocol/index.js";
import { isTerminal } from "../protocol/index.js";
import { ServerClock } from "./server-clock.js";
import { appendEvent, buildTimeline, type RunBlock, type TimelineItem, type ToolCard } from "./timeline.js";

/**
 * One thread as a page sees it, without React: load, replay, send, decide, stop. `useTollgate` is
 * a thin binding of this class to React (`useSyncExternalStore`), so everything here is tested
 * against a real server in Node.
 */

export type SessionStatus = "loading" | "idle" | "running" | "waiting_human";

/** A request the server refused or a connection that failed; run failures are timeline notices. */
export interface SessionError {
  code: string;
  message: string;
  /** HTTP status, 0 when no response carried it. */
  status: number;
}

export interface TollgateSnapshot {
  threadId: string;
  status: SessionStatus;
  /** The chat, history and live runs merged (see `buildTimeline`). */
  messages: readonly TimelineItem[];
  /** The text of the answer streaming now, "" when none is. */
  streamingText: string;
  toolCards: readonly ToolCard[];
  /** The open interrupt: what waits for a person, until when. */
  pending: InterruptPayload | null;
  /** Whether this caller may decide the pending calls (the server's `/approvals` lists them). */
  canDecide: boolean;
  /** The open interrupt has waited past its escalation time (as the inbox says; false when you have no inbox). */
  escalated: boolean;
  /** Decisions taken on some pending calls; the resume is sent once every call has one. */
  drafts: Readonly<Record<string, Decision>>;
  lastOutcome: LastOutcome | null;
  /** The thread owner's `sub`; null before the thread exists. */
  owner: string | null;
  error: SessionError | null;
  /** A cancel was sent and the run has not ended yet. */
  stopping: boolean;
  /** Decisions were sent and the server has not answered yet. */
  submitting: boolean;
}

export interface TollgateSessionOptions {
  baseUrl: string;
  threadId: string;
  token?: TokenSource;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

/**
 * How often a thread that waits (or runs with no stream here) is read again. Nothing streams when
 * someone else decides, when the server closes an expired interrupt, or when another tab's run
 * goes on, so a page that only waited would never learn of it.
 */
const WATCH_MS = 2_000;

export class TollgateSession {
  readonly threadId: string;
  readonly baseUrl: string;
  readonly clock: ServerClock;
  readonly #client: TollgateClient;
  readonly #listeners = new Set<() => void>();
  #view: ThreadView | null = null;
  /** The messages when the thread was first read, which a replayed first run is placed against. */
  #loadedMessages: readonly ThreadMessage[] | undefined;
  #blocks: RunBlock[] = [];
  #status: SessionStatus = "loading";
  #pending: InterruptPayload | null = null;
  #canDecide = false;
  #escalated = false;
  #drafts: Record<string, Decision> = {};
  #error: SessionError | null = null;
  #stopping = false;
  #submitting = false;
  #live: EventStream | undefined;
  #watchTimer: ReturnType<typeof setTimeout> | undefined;
  #watching = false;
  /** The load (the read and the replay of the latest run), while it goes on. */
  #loading: Promise<void> | undefined;
  #disposed = false;
  #snapshot: TollgateSnapshot;

  constructor(opts: TollgateSessionOptions) {
    this.threadId = opts.threadId;
    this.baseUrl = opts.baseUrl;
    this.clock = new ServerClock();
    this.#client = new TollgateClient({
      baseUrl: opts.baseUrl,
      token: opts.token,
      fetch: this.clock.wrapFetch(opts.fetch ?? globalThis.fetch),
    });
    this.#snapshot = this.#build();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  getSnapshot = (): TollgateSnapshot => this.#snapshot;

  /**
   * Loads the thread and replays its latest run from the first event, so a reload mid-stream
   * shows the text streamed so far and follows the rest, and a reload while waiting shows the
   * card. A thread that does not exist yet is an empty one (the first `send` creates it).
   */
  async start(): Promise<void> {
    this.#loading = this.#load();
    await this.#loading;
    this.#loading = undefined;
  }

  async #load(): Promise<void> {
    // Whether the card offers buttons is known before it shows (refresh asks), not one replay later.
    if (!(await this.refresh())) {
      this.#status = "idle";
      this.#emit();
      return;
    }
    if (this.#view) await this.#pump(this.#client.stream(this.threadId), { events: [] }, "replay");
  }

  /**
   * Sends a user message; resolves when its run ends (at an interrupt, done, error or stop), with
   * whether the server took the message (false: refused, see `error`; or not idle, nothing sent).
   */
  async send(text: string): Promise<boolean> {
    // A click while the load (of a thread at rest) is still reading waits for it.
    if (this.#loading && this.#status !== "running") await this.#loading;
    if (this.#status !== "idle" || this.#disposed || this.#live) return false;
    const block: RunBlock = { userText: text, messagesBefore: this.#view?.messages.length ?? 0, events: [] };
    this.#error = null;
    this.#status = "running";
    // `continue`: closing or reloading the page must not stop the run; only Stop does.
    await this.#pump(this.#client.run(this.threadId, text, { on_disconnect: "continue" }), block, "start");
    return block.events.length > 0;
  }

  /** Approves a pending call as the model asked for it. */
  approve(callId: string): Promise<void> {
    return this.#draft({ call_id: callId, approved: true });
  }

  /** Rejects a pending call; the model is told `Rejected: <reason>`. */
  reject(callId: string, reason?: string): Promise<void> {
    return this.#draft({ call_id: callId, approved: false, ...(reason ? { reason } : {}) });
  }

  /** Approves a pending call with some of its arguments replaced (an editable tool only). */
  edit(callId: string, editedArgs: Record<string, unknown>): Promise<void> {
    return this.#draft({ call_id: callId, approved: true, edited_args: editedArgs });
  }

  /**
   * Sends decisions for the open interrupt now; the server rejects any pending call without one.
   * Resolves when the continuation ends, with whether the server took them (false: refused, see
   * `error`, or nothing waits here, so nothing was sent).
   */
  async decide(decisions: Decision[]): Promise<boolean> {
    if (this.#loading && this.#status !== "running") await this.#loading;
    const pending = this.#pending;
    if (!pending || this.#submitting || this.#status !== "waiting_human" || this.#live) return false;
    const block: RunBlock = { messagesBefore: this.#view?.messages.length ?? 0, events: [] };
    this.#error = null;
    this.#submitting = true;
    this.#emit();
    const stream = this.#client.resume(this.threadId, pending.interrupt_id, { decisions, on_disconnect: "continue" });
    await this.#pump(stream, block, "resume");
    return block.events.length > 0;
  }

  /**
   * Stops the run: the server aborts the model's request and the stream ends with `cancelled`,
   * which marks the partial answer stopped. While calls wait, withdraws them instead (each gets a
   * `cancelled` result; only the owner or an admin may). Resolves once the cancel is accepted.
   */
  async stop(): Promise<void> {
    if ((this.#status !== "running" && this.#status !== "waiting_human") || this.#stopping) return;
    this.#stopping = true;
    this.#emit();
    try {
      // A Stop pressed while the message is still on its way waits until the server holds the
      // run; sent earlier, the cancel would find nothing to stop and the answer would run on.
      await this.#live?.opened;
      await this.#client.cancel(this.threadId);
    } catch (err) {
      this.#fail(err);
      return;
    } finally {
      // With a stream open, its end clears the flag; without one, nothing else would.
      if (!this.#live) this.#stopping = false;
      this.#emit();
    }
    // Without a stream to bring the `cancelled` event, the thread's state says how it ended.
    if (!this.#live) await this.refresh();
  }

  /**
   * Reads the thread again (status, pending, results written while nobody streamed); says whether
   * it could. A failed read while the thread runs or waits is retried by the watch.
   */
  async refresh(): Promise<boolean> {
    let read = true;
    try {
      const view = await this.#client.getThread(this.threadId);
      if (this.#disposed) return false;
      this.#setView(view);
      if (view.pending) await this.#checkMayDecide(view.pending);
    } catch (err) {
      if (err instanceof TollgateError && err.code === "thread_not_found") this.#setView(null);
      else {
        read = false;
        this.#fail(err);
        this.#watch();
      }
    }
    this.#emit();
    return read;
  }

  /** Clears a shown request error. */
  dismissError(): void {
    this.#error = null;
    this.#emit();
  }

  /** Closes the stream (the run goes on on the server) and stops timers. */
  dispose(): void {
    this.#disposed = true;
    this.#live?.stop();
    clearTimeout(this.#watchTimer);
    this.#listeners.clear();
  }

  async #draft(decision: Decision): Promise<void> {
    const pending = this.#pending;
    if (!pending || !pending.calls.some((c) => c.call_id === decision.call_id)) return;
    if (pending.calls.some((c) => c.policy === "quorum")) return this.#decideOne(pending, decision);
    this.#drafts = { ...this.#drafts, [decision.call_id]: decision };
    this.#emit();
    if (pending.calls.every((c) => this.#drafts[c.call_id]) && !(await this.decide(pending.calls.map((c) => this.#drafts[c.call_id]!)))) {
      // Not sent or refused: no decision may look taken when it was not.
      this.#drafts = {};
      this.#emit();
    }
  }

  /**
   * One decision on an interrupt that is decided call by call (it holds a quorum call): sent at
   * once. While calls still wait, the thread is read again (the card shows who approved so far);
   * when this one closed the last, the run it started is followed.
   */
  async #decideOne(pending: InterruptPayload, decision: Decision): Promise<void> {
    if (this.#submitting) return;
    this.#error = null;
    this.#submitting = true;
    this.#emit();
    try {
      // Approve pressed while the load's replay still reads (the card shows from the thread's
      // view, before the replay is in) waits for it, as `decide` does: turned away by the open
      // replay stream, the click would be lost without a word and the card would wait forever.
      if (this.#loading && this.#status !== "running") await this.#loading;
      if (this.#disposed || this.#status !== "waiting_human" || this.#live || this.#pending?.interrupt_id !== pending.interrupt_id) return;
      const taken = await this.#client.resumeDetached(this.threadId, pending.interrupt_id, { decisions: [decision] });
      if (taken.run_id === null) {
        await this.refresh();
        return;
      }
      this.#pending = null;
      await this.#pump(this.#client.stream(this.threadId), { messagesBefore: this.#view?.messages.length ?? 0, events: [] }, "follow");
    } catch (err) {
      this.#fail(err);
      await this.refresh();
    } finally {
      this.#submitting = false;
      this.#drafts = {};
      this.#emit();
    }
  }

  /**
   * Reads one stream into its block. A `start`/`resume` the server refuses (409, 410, 429…)
   * leaves no block and shows the error; a stream lost mid-run shows the error and the thread is
   * read again. Each ends with a fresh read of the thread.
   */
  async #pump(stream: EventStream, block: RunBlock, kind: "start" | "resume" | "replay" | "follow"): Promise<void> {
    if (this.#disposed) return stream.stop();
    this.#live?.stop();
    this.#live = stream;
    this.#blocks.push(block);
    this.#emit();
    // A replay of a run that had already ended when the thread was read is history, not a run:
    // the thread's view keeps the status and the pending interrupt (an interrupt the replay ends
    // at may have expired or been cancelled since), and the replay shows at once when complete
    // instead of as a stream (no "running", no Stop, no streaming answer for a moment).
    const live = kind !== "replay" || this.#view?.status === "running";
    try {
      for await (const event of stream) {
        if (this.#disposed) return;
        if (block.events.length === 0 && kind === "resume") {
          this.#pending = null;
          this.#drafts = {};
        }
        if (block.events.length === 0 && kind === "follow") block = this.#placeFollowed(block, event);
        appendEvent(block, event);
        block.lastEventId = stream.lastEventId;
        if (!live) continue;
        if (!isTerminal(event)) this.#status = "running";
        else this.#onTerminal(event);
        this.#emit();
      }
    } catch (err) {
      if (this.#disposed) return;
      this.#fail(err);
    } finally {
      if (this.#live === stream) this.#live = undefined;
      if (block.events.length === 0) this.#blocks = this.#blocks.filter((b) => b !== block);
      if (kind === "resume") {
        this.#submitting = false;
        this.#drafts = {};
      }
      this.#stopping = false;
    }
    if (this.#disposed) return;
    // The thread as read right after the run says where the run's own messages end, unless
    // another run has begun since (its messages are not this run's).
    if (await this.refresh()) {
      const last = block.events.at(-1);
      if (last && isTerminal(last) && this.#view?.status !== "running") block.messagesAfter = this.#view?.messages.length ?? 0;
    }
  }

  /**
   * Where a followed run's events go: on into the block of the same run when this page saw its
   * start (its stream was lost), else a new block; a new run that begins with the model (not
   * with a decision's result) was started by a message sent elsewhere, which the thread has.
   */
  #placeFollowed(block: RunBlock, first: ProtocolEvent): RunBlock {
    const known = this.#blocks.find((b) => b !== block && b.events[0]?.run_id === first.run_id);
    if (known) {
      this.#blocks = this.#blocks.filter((b) => b !== block);
      return known;
    }
    if (first.type === "token" || first.type === "tool_call") {
      const messages = this.#view?.messages ?? [];
      const user = [...messages].reverse().find((m) => m.role === "user");
      if (user) block.userText = user.content;
    }
    return block;
  }

  /** Follows the thread's latest run from after the last event this page saw (204: nothing new). */
  async #follow(): Promise<void> {
    if (this.#live) return;
    const lastEventId = this.#blocks.at(-1)?.lastEventId;
    await this.#pump(this.#client.stream(this.threadId, lastEventId ? { lastEventId } : {}), { events: [] }, "follow");
  }

  #onTerminal(event: { type: string } & Partial<InterruptPayload>): void {
    if (event.type === "interrupt") {
      this.#status = "waiting_human";
      this.#pending = event as InterruptPayload;
    } else {
      this.#status = "idle";
      this.#pending = null;
    }
  }

  #setView(view: ThreadView | null): void {
    this.#view = view;
    this.#loadedMessages ??= view?.messages ?? [];
    // A stream still open owns the status until its terminal event.
    if (!this.#live) this.#status = view?.status ?? "idle";
    const before = this.#pending?.interrupt_id;
    this.#pending = view?.pending ?? (this.#live ? this.#pending : null);
    if (this.#pending?.interrupt_id !== before) this.#drafts = {};
    if (!this.#pending) {
      this.#canDecide = false;
      this.#escalated = false;
    }
    this.#watch();
  }

  async #checkMayDecide(pending: InterruptPayload): Promise<void> {
    try {
      const { items } = await this.#client.approvals();
      const item = items.find((i) => i.interrupt_id === pending.interrupt_id);
      this.#canDecide = item !== undefined;
      this.#escalated = item?.escalated ?? false;
    } catch {
      this.#canDecide = false; // no inbox for this caller: the card shows who must decide
    }
  }

  /**
   * While the thread waits, or runs with no stream open here, reads it every `WATCH_MS`; when a
   * run is going on (someone approved, another tab sent a message) or the wait ended, follows the
   * latest run from after the last event seen. An expiry or a cancel elsewhere shows as results.
   */
  #watch(): void {
    // One tick at a time: a slow read must not let a second tick follow the same run twice.
    if (this.#watching) return;
    clearTimeout(this.#watchTimer);
    if (this.#disposed || this.#live || (this.#status !== "waiting_human" && this.#status !== "running")) return;
    this.#watchTimer = setTimeout(async () => {
      this.#watching = true;
      try {
        const before = this.#status;
        const read = await this.refresh();
        if (this.#disposed || this.#live || !read) return;
        const last = this.#blocks.at(-1)?.events.at(-1);
        const unfinished = last !== undefined && !isTerminal(last); // its stream was lost mid-run
        if (this.#view?.status === "running" || before !== this.#status || unfinished) await this.#follow();
      } finally {
        this.#watching = false;
        // Also after a failed read: the next tick is what retries it.
        this.#watch();
      }
    }, WATCH_MS);
  }

  #fail(err: unknown): void {
    this.#error =
      err instanceof TollgateError
        ? { code: err.code, message: err.message, status: err.status }
        : { code: "network_error", message: err instanceof Error ? err.message : String(err), status: 0 };
  }

  #emit(): void {
    this.#snapshot = this.#build();
    for (const listener of this.#listeners) listener();
  }

  #build(): TollgateSnapshot {
    const messages = buildTimeline({
      messages: this.#view?.messages ?? [],
      loadedMessages: this.#loadedMessages ?? [],
      blocks: this.#blocks,
      pendingCallIds: this.#pending?.calls.map((c) => c.call_id),
    });
    const last = messages.at(-1);
    return {
      threadId: this.threadId,
      status: this.#status,
      messages,
      streamingText: last?.kind === "assistant" && last.state === "streaming" ? last.text : "",
      toolCards: messages.flatMap((m) => (m.kind === "tool" ? [m.card] : [])),
      pending: this.#pending,
      canDecide: this.#canDecide,
      escalated: this.#escalated,
      drafts: this.#drafts,
      lastOutcome: this.#view?.last_outcome ?? null,
      owner: this.#view?.owner ?? null,
      error: this.#error,
      stopping: this.#stopping,
      submitting: this.#submitting,
    };
  }
}
