import { isTerminal, type EventOf, type ProtocolEvent, type ThreadMessage, type ToolStatus } from "../protocol/index.js";

/**
 * What a chat shows, derived from two sources that overlap: the thread's committed messages
 * (`GET /threads/:id`) and the events of the runs this page has watched. Events carry what
 * messages cannot (text still streaming, the partial answer of a stopped run); messages carry what
 * no stream does (results written by expiry or a cancel while nobody watched). `buildTimeline` is
 * pure so each merge rule is tested without a server.
 */

/** A tool call as a card: asked for, waiting at the gate, then ended with a status. */
export interface ToolCard {
  call_id: string;
  name: string;
  /** Sensitive fields are already masked by the server. */
  args: Record<string, unknown>;
  needs_approval: boolean;
  /** `running` (asked for, no result yet) and `waiting` (at the gate) precede a tool status. */
  status: "running" | "waiting" | ToolStatus;
  output?: string;
  error?: string;
  edited?: boolean;
}

/** How an assistant answer ended: still coming, complete, stopped by a person, or cut by a failure. */
export type AnswerState = "streaming" | "done" | "stopped" | "failed";

export type TimelineItem =
  | { kind: "user"; key: string; text: string }
  | { kind: "assistant"; key: string; text: string; state: AnswerState }
  | { kind: "tool"; key: string; card: ToolCard }
  | { kind: "notice"; key: string; tone: "error" | "stopped"; code: string; text: string };

/** One run as this page saw it: its events in order (consecutive tokens merged into one). */
export interface RunBlock {
  /** The message that started it, when this page sent it. */
  userText?: string;
  /**
   * How many of the thread's messages the page knew of when it started this run: where the run
   * is placed until the thread is read again and its own messages can be found (`blockStart`).
   */
  messagesBefore?: number;
  /**
   * How many messages the thread had when read right after this run ended: its own end there, and
   * messages after it that no watched run accounts for (another client's) show as history.
   */
  messagesAfter?: number;
  events: ProtocolEvent[];
  /** The id of its last event seen: where following it again resumes. */
  lastEventId?: string;
}

export interface TimelineInput {
  /** The latest `GET /threads/:id` messages (append-only, so earlier indexes stay valid). */
  messages: readonly ThreadMessage[];
  /** The messages when the page loaded, which a replayed first block is placed against. */
  loadedMessages: readonly ThreadMessage[];
  blocks: readonly RunBlock[];
  /** The open interrupt: its calls show as waiting even when their `interrupt` event was not seen. */
  pendingCallIds?: readonly string[];
}

const SETTLED: ReadonlySet<ToolCard["status"]> = new Set(["ok", "error", "invalid_args", "rejected", "expired", "cancelled"]);

/** Appends an event to a block, merging a token into the token before it (a long answer stays one entry). */
export function appendEvent(block: RunBlock, event: ProtocolEvent): void {
  const last = block.events.at(-1);
  if (event.type === "token" && last?.type === "token") {
    block.events[block.events.length - 1] = { ...last, text: last.text + event.text };
  } else {
    block.events.push(event);
  }
}

/** Where `blockStart` looks for a run's messages. */
export interface BlockSearch {
  /** The thread's messages as last read. */
  messages: readonly ThreadMessage[];
  /** The end of what earlier runs account for: nothing of this run sits before it. */
  from: number;
  /** The thread's messages as loaded with the page, for a run replayed after a reload. */
  loaded?: readonly ThreadMessage[];
}

/**
 * Where a run's own messages begin among the thread's `messages`, searching from `from` (the end of
 * what earlier runs account for):
 * - a run this page started committed its user message first: the first user message with its text;
 * - a resume's first event is the `tool_result` of a decided call: that tool message (the call's
 *   assistant message stays history);
 * - a run replayed after a reload that began with the model started at the last user message of
 *   the thread as loaded (`loaded`);
 * - a run whose first event is its end (say a model error) added nothing: it sits after them all.
 * Until the run's messages can be found (the thread not read again yet), it sits where the page
 * last knew the thread to end.
 */
export function blockStart(block: RunBlock, at: BlockSearch): number {
  const { messages, loaded } = at;
  let { from } = at;
  const fallback = Math.max(from, Math.min(block.messagesBefore ?? messages.length, messages.length));
  const found = (at: number) => (at === -1 ? fallback : at);
  // Messages are append-only: nothing of a run can sit before what existed when it started.
  from = Math.max(from, Math.min(block.messagesBefore ?? 0, messages.length));
  if (block.userText !== undefined) {
    return found(indexFrom(messages, from, (m) => m.role === "user" && m.content === block.userText));
  }
  const first = block.events[0];
  if (!first) return fallback;
  if (first.type === "tool_result") {
    const results = new Set(block.events.flatMap((e) => (e.type === "tool_result" ? [e.call_id] : [])));
    return found(indexFrom(messages, from, (m) => m.role === "tool" && m.tool_call_id !== undefined && results.has(m.tool_call_id)));
  }
  if (isTerminal(first)) return Math.max(from, Math.min(block.messagesAfter ?? messages.length, messages.length));
  if (loaded) {
    for (let i = loaded.length - 1; i >= from; i--) if (loaded[i]!.role === "user") return Math.min(i + 1, messages.length);
  }
  return fallback;
}

function indexFrom(messages: readonly ThreadMessage[], from: number, test: (m: ThreadMessage) => boolean): number {
  for (let i = from; i < messages.length; i++) if (test(messages[i]!)) return i;
  return -1;
}

/**
 * The chat, in order: each watched run from its events, placed among the thread's messages;
 * messages no watched run accounts for (before the first, between runs, another client's) as
 * history. A run's own messages only settle its cards: an expiry or a cancel closed the gate while
 * the page only waited, and nothing streamed.
 */
export function buildTimeline(input: TimelineInput): TimelineItem[] {
  const { messages, blocks } = input;
  const builder = new Builder();
  let cursor = 0;
  blocks.forEach((block, b) => {
    const start = blockStart(block, { messages, from: cursor, loaded: b === 0 ? input.loadedMessages : undefined });
    for (let i = cursor; i < start; i++) builder.message(messages[i]!, i);
    builder.block(block, b);
    // A run adds no user message but its first: the next one begins someone else's run, even when
    // it was read as this run's end (the thread was read as another client's run began).
    const nextUser = indexFrom(messages, block.userText !== undefined ? start + 1 : start, (m) => m.role === "user");
    const known = block.messagesAfter === undefined ? messages.length : Math.max(start, Math.min(block.messagesAfter, messages.length));
    const end = nextUser === -1 ? known : Math.min(known, nextUser);
    for (let i = start; i < end; i++) builder.settleFromMessage(messages[i]!);
    cursor = end;
  });
  for (let i = cursor; i < messages.length; i++) builder.message(messages[i]!, i);
  builder.markWaiting(input.pendingCallIds ?? []);
  return builder.items;
}

class Builder {
  readonly items: TimelineItem[] = [];
  readonly #cards = new Map<string, ToolCard>();

  message(m: ThreadMessage, index: number): void {
    const key = `m${index}`;
    if (m.role === "user") this.items.push({ kind: "user", key, text: m.content });
    else if (m.role === "assistant") {
      if (m.content) this.items.push({ kind: "assistant", key, text: m.content, state: "done" });
      for (const c of m.tool_calls ?? []) {
        this.#addCard(c.id, { call_id: c.id, name: c.name, args: c.args, needs_approval: false, status: "running" });
      }
    } else if (m.tool_call_id !== undefined) {
      this.settleFromMessage(m);
    }
  }

  markWaiting(callIds: readonly string[]): void {
    for (const id of callIds) {
      const card = this.#cards.get(id);
      if (card && !SETTLED.has(card.status)) this.#replace(card, { ...card, needs_approval: true, status: "waiting" });
    }
  }

  settleFromMessage(m: ThreadMessage): void {
    if (m.role !== "tool" || m.tool_call_id === undefined) return;
    const card = this.#cards.get(m.tool_call_id);
    if (!card || SETTLED.has(card.status)) return;
    const status = m.status ?? "ok";
    this.#replace(card, {
      ...card,
      status,
      ...(status === "ok" ? { output: m.content } : { error: m.content }),
      ...(m.edited ? { edited: true } : {}),
    });
  }

  block(block: RunBlock, b: number): void {
    if (block.userText !== undefined) this.items.push({ kind: "user", key: `b${b}u`, text: block.userText });
    let answer: Extract<TimelineItem, { kind: "assistant" }> | undefined;
    const closeAnswer = (state: AnswerState) => {
      if (answer) answer.state = state;
      answer = undefined;
    };
    block.events.forEach((e, i) => {
      const key = `b${b}e${i}`;
      switch (e.type) {
        case "token":
          if (!answer) {
            answer = { kind: "assistant", key, text: "", state: "streaming" };
            this.items.push(answer);
          }
          answer.text += e.text;
          return;
        case "tool_call":
          closeAnswer("done");
          this.#addCard(e.call_id, {
            call_id: e.call_id,
            name: e.name,
            args: e.args,
            needs_approval: e.needs_approval,
            status: "running",
          });
          return;
        case "tool_result": {
          closeAnswer("done");
          const card = this.#cards.get(e.call_id) ?? this.#addCard(e.call_id, { call_id: e.call_id, name: e.name, args: {}, needs_approval: false, status: "running" });
          this.#replace(card, {
            ...card,
            status: e.status,
            ...(e.output !== undefined ? { output: e.output } : {}),
            ...(e.error !== undefined ? { error: e.error } : {}),
            ...(e.edited ? { edited: true } : {}),
          });
          return;
        }
        case "interrupt":
          closeAnswer("done");
          this.markWaiting(e.calls.map((c) => c.call_id));
          return;
        case "done":
          // A run whose model sent its answer without tokens still has one. `message` is the last
          // assistant text, which may be one already shown before the tools it asked for ran
          // (max_rounds right after them, or a resume that hit the limit): not twice.
          if (!answer && e.message && !this.#answeredSinceUser(e.message)) {
            this.items.push({ kind: "assistant", key, text: e.message, state: "done" });
          }
          closeAnswer("done");
          return;
        case "error":
          closeAnswer("failed");
          this.items.push({ kind: "notice", key, tone: "error", code: e.code, text: e.message });
          return;
        case "cancelled":
          closeAnswer("stopped");
          this.items.push({ kind: "notice", key, tone: "stopped", code: e.reason, text: STOPPED_TEXT[e.reason] });
          return;
      }
    });
  }

  /** Whether the latest answer since the latest user message, tool cards between them aside, is `text`. */
  #answeredSinceUser(text: string): boolean {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i]!;
      if (item.kind === "user") return false;
      if (item.kind === "assistant") return item.text === text;
    }
    return false;
  }

  #addCard(callId: string, card: ToolCard): ToolCard {
    const existing = this.#cards.get(callId);
    if (existing) return existing;
    this.#cards.set(callId, card);
    this.items.push({ kind: "tool", key: `c${callId}`, card });
    return card;
  }

  /** Cards are values (React compares them by identity), so a change is a new card in the same slot. */
  #replace(old: ToolCard, next: ToolCard): void {
    this.#cards.set(old.call_id, next);
    const at = this.items.findIndex((it) => it.kind === "tool" && it.card === old);
    if (at !== -1) this.items[at] = { kind: "tool", key: this.items[at]!.key, card: next };
  }
}

const STOPPED_TEXT: Record<EventOf<"cancelled">["reason"], string> = {
  api: "Stopped. The answer above is incomplete.",
  client: "Stopped: the client went away. The answer above is incomplete.",
  shutdown: "Stopped: the server shut down. The answer above is incomplete.",
};
