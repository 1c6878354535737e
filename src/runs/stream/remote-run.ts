import { type CancelReason, isTerminal } from "../../protocol/index.js";
import type { LoggedEvent, ReplicaBus, RunRow, Store } from "../../store/index.js";

/** With notices flowing, a read now and then only covers one lost with a dropped connection. */
const POLL_CONNECTED_MS = 2000;
/** While the bus reconnects, reads are what follow a run. */
const POLL_DISCONNECTED_MS = 200;
/** A cancel waits this long for a run on another replica to end; its lease covers a dead one. */
export const REMOTE_CANCEL_WAIT_MS = 10_000;

/**
 * Resolves at the next `run_events` notice for `runId`, after a poll interval, or on abort. Made
 * before the read it guards, so a notice between the read and the wait is not missed.
 */
function nextNotice(bus: ReplicaBus, runId: string, signal?: AbortSignal): { arrived: Promise<void>; cancel: () => void } {
  let done!: () => void;
  const arrived = new Promise<void>((resolve) => (done = resolve));
  const unsubscribe = bus.subscribe("run_events", (key) => key === runId && finish());
  const timer = setTimeout(() => finish(), bus.connected ? POLL_CONNECTED_MS : POLL_DISCONNECTED_MS);
  const onAbort = () => finish();
  signal?.addEventListener("abort", onAbort, { once: true });
  function finish() {
    unsubscribe();
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    done();
  }
  return { arrived, cancel: finish };
}

/**
 * The stored log of a run after `from.afterSeq`, followed while the run goes on elsewhere (another
 * replica writes it): each batch as it is committed, until the terminal event, the run's end, or
 * `from.signal`.
 */
export async function* followStoredRun(store: Store, runId: string, from: { afterSeq: number; signal?: AbortSignal }): AsyncGenerator<LoggedEvent[]> {
  const { signal } = from;
  let seq = from.afterSeq;
  for (;;) {
    const notice = nextNotice(store.bus, runId, signal);
    try {
      // The row first: the end and its terminal event commit together, so a row read as ended
      // before the log means that read of the log has everything.
      const row = await store.runs.get(runId);
      const batch = await store.runs.read(runId, seq);
      if (batch.length) {
        seq = batch.at(-1)!.seq;
        yield batch;
        if (isTerminal(batch.at(-1)!)) return;
        continue;
      }
      if (!row || row.ended_at !== null) return;
      if (signal?.aborted) return;
      await notice.arrived;
      if (signal?.aborted) return;
    } finally {
      notice.cancel();
    }
  }
}

/** Asks the replica running `runId` to cancel it, and waits (bounded) for the run to end. */
export async function cancelRemoteRun(store: Store, runId: string, reason: CancelReason): Promise<RunRow | undefined> {
  // Elapsed time on the system clock, not the injected one: this bounds a real wait on notices.
  const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
  for (;;) {
    const notice = nextNotice(store.bus, runId);
    try {
      const row = await store.runs.get(runId);
      if (!row || row.ended_at !== null || Date.now() >= deadline) return row;
      // Sent again at every wake-up: a notice is lost while the running replica's listening
      // connection reconnects, and stopping a run twice is stopping it once.
      await store.bus.publish("cancel", runId, reason);
      await notice.arrived;
    } finally {
      notice.cancel();
    }
  }
}
