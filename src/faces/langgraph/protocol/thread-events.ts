import type { Principal } from "../../../auth/index.js";
import type { InterruptPayload } from "../../../protocol/index.js";
import type { RunRow, ThreadFeed, ThreadService, ThreadWatch } from "../../../runs/index.js";
import { valuesOf } from "../runs/resources.js";
import { frameChannel, interruptChange, ProtocolTranslator, turnsIn } from "./event-translator.js";
import { aiMessageId, MessageIds } from "./message-ids.js";
import { type Emitted, frameSeq, lastSeqOf, ordinalOf, type ProtocolChannel, type ProtocolEvent, runSeq, type Slot, type StreamGap, type StreamItem, tailSeq } from "./protocol-event.js";
import { mayFollow } from "./thread-visibility.js";

export interface ThreadEventsOptions {
  feed: ThreadFeed;
  threads: ThreadService;
  principal: Principal;
  threadId: string;
  /** Events after this seq; none: the latest run from its first event. */
  since?: number;
  /** Whether anyone reading wants a channel: the graph's chunks for none are not shown (masked, serialized) at all. */
  wants: (channel: ProtocolChannel) => boolean;
  signal: AbortSignal;
}

/**
 * A thread's protocol events in seq order, across its runs, for as long as `signal` lets it: the
 * runs' durable logs translated (live ones as they grow), and after a run that stopped at the gate,
 * its interrupt's changes until it closes. A thread that does not exist yet, or that the principal
 * may not see, is waited for alike (until there is one the principal may see). Nothing
 * is kept per connection: a reconnect, a restart or another replica reads the same events with the
 * same seqs from the store (the graph's own chunks only where the run's process keeps them).
 */
export async function* threadEvents(o: ThreadEventsOptions): AsyncGenerator<StreamItem[]> {
  const { feed, threadId, signal } = o;
  const watch = feed.watch(threadId);
  try {
    while (!(await mayFollow(feed, o.principal, threadId))) {
      await watch.wait(signal);
      if (signal.aborted) return;
    }
    let after = o.since ?? -1;
    let ordinal = o.since !== undefined ? Math.max(1, ordinalOf(o.since)) : ((await feed.latestRun(threadId))?.ordinal ?? 1);
    while (!signal.aborted) {
      const runs = await feed.runsFrom(threadId, ordinal);
      if (!runs.length) {
        await watch.wait(signal);
        continue;
      }
      for (const run of runs) {
        if (run.ended_at !== null && !(await feed.logKept(run.run_id))) {
          // Its events are gone: the client hears which, and the stream goes on after them.
          if (after < lastSeqOf(run.ordinal)) {
            const gap = gapOf(run.ordinal, after);
            after = gap.tollgate.to_seq;
            yield [gap];
          }
        } else {
          for await (const batch of runEvents({ ...o, run, watch, after })) {
            if (!batch.length) continue;
            after = batch.at(-1)!.seq;
            yield batch;
          }
        }
        if (signal.aborted) return;
        ordinal = run.ordinal + 1;
      }
    }
  } finally {
    watch.close();
  }
}

/** One run's events after `after`; after a stop at the gate, its interrupt's changes until it closes or a newer run starts. */
async function* runEvents(o: ThreadEventsOptions & { run: RunRow; watch: ThreadWatch; after: number }): AsyncGenerator<ProtocolEvent[]> {
  const { run, feed, signal } = o;
  const graphId = (await o.threads.row(o.principal, o.threadId)).graph_id;
  const { ids, messageId } = await messageNaming({ feed, threadId: o.threadId, run, signal });
  const readState = async () => {
    const snapshot = await o.threads.snapshot(o.principal, o.threadId);
    return { values: ids.display(valuesOf(snapshot)), checkpoint: snapshot.checkpoint };
  };
  const translator = new ProtocolTranslator({ graphId, messageId, readState });
  let after = o.after;
  const place = (emitted: Slot[], seqOf: (k: number) => number): ProtocolEvent[] => {
    const out: ProtocolEvent[] = [];
    emitted.forEach((e, k) => {
      const seq = seqOf(k);
      if (e && seq > after) out.push(event(seq, e));
    });
    if (out.length) after = out.at(-1)!.seq;
    return out;
  };
  yield place(await translator.start(), (k) => runSeq({ ordinal: run.ordinal, loggedSeq: -1, k }));
  let opened: InterruptPayload | undefined;
  for await (const batch of feed.eventsWithFrames(run.run_id, signal)) {
    const out: ProtocolEvent[] = [];
    for (const e of batch) {
      if ("kind" in e) {
        const channel = frameChannel(e);
        const seq = frameSeq({ ordinal: run.ordinal, after: e.after, n: e.n });
        if (channel && seq !== undefined && o.wants(channel)) out.push(...place([translator.frame(e)], () => seq));
        continue;
      }
      if (e.type === "interrupt") opened = JSON.parse(e.data) as InterruptPayload;
      out.push(...place(await translator.events(e), (k) => runSeq({ ordinal: run.ordinal, loggedSeq: e.seq, k })));
    }
    yield out;
  }
  if (!opened) return;
  // The run stopped at the gate: what happens to its interrupt comes next, until it closes.
  while (!signal.aborted) {
    const state = await feed.interrupt(opened.interrupt_id);
    if (!state) return;
    const waiting = state.status === "waiting_human";
    if (!waiting || state.progressSeq > 0) {
      const now = waiting ? ((await o.threads.snapshot(o.principal, o.threadId)).pending ?? undefined) : undefined;
      const progress = waiting ? state.progressSeq : "closed";
      yield place(interruptChange({ opened, now, status: state.status }), (k) => tailSeq({ ordinal: run.ordinal, progress, k }));
    }
    if (!waiting) return;
    await o.watch.wait(signal);
  }
}

/**
 * How a run's assistant messages are named: after the user message of the latest message run up
 * to it, counting the answers the runs since then streamed (a resume goes on answering the same
 * message).
 */
async function messageNaming(o: { feed: ThreadFeed; threadId: string; run: RunRow; signal: AbortSignal }) {
  const runs = await o.feed.runsFrom(o.threadId, 0);
  const ids = MessageIds.of(runs);
  const at = runs.findIndex((r) => r.run_id === o.run.run_id);
  let from = at;
  while (from > 0 && ids.anchorOf(runs[from]!) === undefined) from--;
  const anchor = (from >= 0 && ids.anchorOf(runs[from]!)) || "start";
  let before = 0;
  for (const r of runs.slice(Math.max(from, 0), Math.max(at, 0))) {
    for await (const batch of o.feed.events(r.run_id, -1, o.signal)) before += turnsIn(batch);
  }
  return { ids, messageId: (turn: number) => aiMessageId(anchor, before + turn) };
}

function gapOf(ordinal: number, after: number): StreamGap {
  const from = Math.max(after + 1, runSeq({ ordinal, loggedSeq: -1, k: 0 }));
  const to = lastSeqOf(ordinal);
  return {
    type: "error",
    id: null,
    error: "no_such_run",
    message: `Events ${from} to ${to} (run ${ordinal} of the thread) are no longer kept; read the thread's state`,
    tollgate: { code: "events_pruned", from_seq: from, to_seq: to },
  };
}

function event(seq: number, e: Emitted): ProtocolEvent {
  return {
    type: "event",
    event_id: String(seq),
    seq,
    method: e.method,
    params: { namespace: [...(e.namespace ?? [])], timestamp: Date.now(), ...(e.node ? { node: e.node } : {}), data: e.data },
  };
}
