import { isTerminal, parseEventId, type ProtocolEvent } from "../protocol/index.js";
import { abortableSleep } from "../lib/index.js";
import { backoffDelay, type ReconnectPolicy } from "./backoff.js";
import { errorFromResponse, networkError, protocolError } from "./errors.js";
import { parseEvent } from "./parse-event.js";
import { readSse, type SseMessage } from "./sse-reader.js";

/** The events of one stream, in order, each once. Iterate it once (for await, or `collect()`). */
export interface EventStream extends AsyncIterable<ProtocolEvent> {
  /** Aborts the underlying request; the iterator then ends quietly, with no reconnect. */
  stop(): void;
  /** `<run_id>:<seq>` of the last event yielded (or the one the stream was opened after). */
  readonly lastEventId: string | undefined;
  /** Iterates to the end and returns every event not consumed yet. */
  collect(): Promise<ProtocolEvent[]>;
  /**
   * Settles (never rejects) once the first request has its answer or failed. For a POST that
   * started a run, the server holds the run from then on: a cancel sent earlier could arrive
   * before the run exists and miss it.
   */
  readonly opened: Promise<void>;
}

/** Where an event stream's bytes come from. */
export interface EventStreamSource {
  /**
   * The POST that starts a run. Never sent twice: a second POST could start a second run, so a
   * stream that drops before its first event cannot be recovered.
   */
  start?: (signal: AbortSignal) => Promise<Response>;
  /** `GET …/stream`, replaying after `lastEventId` (the whole run when undefined). */
  follow: (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;
  /** Resume point of a stream opened with `follow`. */
  lastEventId?: string;
  reconnect: ReconnectPolicy;
}

type Outcome = { kind: "end" } | { kind: "drop"; cause: unknown; progressed: boolean };

/**
 * Opens the stream at once (like `fetch`), so a run starts even before anyone iterates; call
 * `stop()` on a stream you will not read, or its connection stays open.
 */
export function openEventStream(source: EventStreamSource): EventStream {
  return new ReconnectingEventStream(source);
}

class ReconnectingEventStream implements EventStream {
  readonly #source: EventStreamSource;
  readonly #controller = new AbortController();
  /** Highest seq yielded per run: replays after a reconnect overlap what was already seen. */
  readonly #lastSeq = new Map<string, number>();
  readonly #first: Promise<Response>;
  readonly #iterator: AsyncGenerator<ProtocolEvent, void, undefined>;
  #lastEventId: string | undefined;
  /** The run a POST started (its `X-Run-Id` header): lets a drop before the first event be recovered. */
  #runId: string | undefined;

  constructor(source: EventStreamSource) {
    this.#source = source;
    this.#lastEventId = source.lastEventId;
    const resumeFrom = source.lastEventId === undefined ? null : parseEventId(source.lastEventId);
    if (resumeFrom) this.#lastSeq.set(resumeFrom.runId, resumeFrom.seq);
    const signal = this.#controller.signal;
    this.#first = source.start ? source.start(signal) : source.follow(source.lastEventId, signal);
    // The failure is delivered by the first next(); this only keeps Node from calling it unhandled
    // when nobody iterates.
    this.#first.catch(() => undefined);
    this.#iterator = this.#events();
  }

  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  get opened(): Promise<void> {
    return this.#first.then(
      () => undefined,
      () => undefined,
    );
  }

  stop(): void {
    this.#controller.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<ProtocolEvent> {
    return this.#iterator;
  }

  async collect(): Promise<ProtocolEvent[]> {
    const events: ProtocolEvent[] = [];
    for await (const event of this) events.push(event);
    return events;
  }

  async *#events(): AsyncGenerator<ProtocolEvent, void, undefined> {
    const signal = this.#controller.signal;
    const policy = this.#source.reconnect;
    let pending = this.#first;
    let reconnecting = false;
    let failures = 0;
    try {
      for (;;) {
        const outcome = yield* this.#connection(pending, reconnecting);
        if (outcome.kind === "end" || signal.aborted) return;
        if (this.#source.start && this.#lastEventId === undefined && this.#runId === undefined) {
          // Without a run id, a replay could show another run's events: better to say so.
          throw networkError("the run's stream dropped before its first event", outcome.cause);
        }
        failures = outcome.progressed ? 1 : failures + 1;
        if (failures > policy.retries) {
          throw networkError(`stream lost after ${policy.retries} reconnect attempts`, outcome.cause);
        }
        // A stop() during the wait rejects it at once: the catch below ends the stream quietly.
        await abortableSleep(backoffDelay(failures - 1, policy), signal);
        reconnecting = true;
        pending = this.#source.follow(this.#lastEventId, signal);
      }
    } catch (err) {
      if (signal.aborted) return; // stop() won: whatever failed after it is its echo
      throw err;
    } finally {
      // Ends the connection after a terminal event, an error or a consumer's break alike.
      this.#controller.abort();
    }
  }

  /** Reads one connection's events; says whether the stream ended or dropped. */
  async *#connection(pending: Promise<Response>, reconnecting: boolean): AsyncGenerator<ProtocolEvent, Outcome, undefined> {
    let response: Response;
    try {
      response = await pending;
    } catch (cause) {
      return { kind: "drop", cause, progressed: false };
    }
    if (!response.ok) {
      const error = await errorFromResponse(response);
      // A gateway in front of a restarting server answers these for a moment; anything else is
      // the server's considered answer.
      if (reconnecting && TRANSIENT_STATUS.has(response.status)) return { kind: "drop", cause: error, progressed: false };
      throw error;
    }
    // The server has nothing (more) to send: the thread has had no run, or we hold its end.
    if (response.status === 204) return { kind: "end" };
    const contentType = response.headers.get("content-type") ?? "";
    if (!contentType.startsWith("text/event-stream") || !response.body) {
      await response.body?.cancel();
      throw protocolError(`expected an event stream, got ${response.status} ${contentType || "(no content type)"}`);
    }
    if (!reconnecting && this.#source.start) this.#runId = response.headers.get("x-run-id") ?? undefined;
    const messages = readSse(response.body);
    let progressed = false;
    try {
      for (;;) {
        let step: IteratorResult<SseMessage, void>;
        try {
          step = await messages.next();
        } catch (cause) {
          return { kind: "drop", cause, progressed };
        }
        if (step.done) {
          return { kind: "drop", cause: new Error("stream ended before a terminal event"), progressed };
        }
        // Events already parsed from the last chunk must not slip out (or move lastEventId) after stop().
        if (this.#controller.signal.aborted) return { kind: "end" };
        const event = this.#accept(step.value);
        if (event === undefined) continue;
        progressed = true;
        yield event;
        if (isTerminal(event)) return { kind: "end" };
      }
    } finally {
      await messages.return();
    }
  }

  /** The event to yield, or undefined for a replayed one already yielded. */
  #accept(message: SseMessage): ProtocolEvent | undefined {
    const id = message.id === undefined ? null : parseEventId(message.id);
    if (!id) throw protocolError(`frame without a <run_id>:<seq> id (got ${JSON.stringify(message.id ?? null)})`);
    if (this.#runId !== undefined && id.runId !== this.#runId) {
      throw protocolError(`expected events of run ${this.#runId}, got ${message.id}: the thread moved on to another run`);
    }
    const last = this.#lastSeq.get(id.runId);
    if (last !== undefined && id.seq <= last) return undefined;
    const event = parseEvent(message);
    if (event.run_id !== id.runId) throw protocolError(`event ${message.id} carries run_id ${event.run_id}`);
    this.#lastSeq.set(id.runId, id.seq);
    this.#lastEventId = message.id;
    return event;
  }
}

const TRANSIENT_STATUS = new Set([502, 503, 504]);
