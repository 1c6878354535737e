import type { LoggedEvent } from "../../protocol/index.js";
import type { GraphFrame } from "./graph-frames.js";

/** How many ended runs keep their frames, and for how long: enough for a client's replay right after. */
const RECENT_RUNS = 256;
const RECENT_MS = 5 * 60_000;

/**
 * The frames of runs that ended in this process, for a while: a stream opened after the run ended
 * replays them in their places. LangGraph's clients rely on that: the SDK's `ThreadStream` reopens
 * its stream from the run's start whenever a subscription widens it, and closes the old one, so a
 * run that ends in between would lose the frames the old stream had not delivered yet.
 */
export class RecentFrames {
  private readonly byRun = new Map<string, { frames: readonly GraphFrame[]; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  keep(runId: string, frames: readonly GraphFrame[]): void {
    if (!frames.length) return;
    this.byRun.set(runId, { frames, at: this.now() });
    // Oldest first, in the order kept: the map's insertion order.
    for (const [id, kept] of this.byRun) {
      if (this.byRun.size <= RECENT_RUNS && this.now() - kept.at < RECENT_MS) break;
      this.byRun.delete(id);
    }
  }

  /** A run's frames while they are kept; none after that. */
  of(runId: string): readonly GraphFrame[] {
    const kept = this.byRun.get(runId);
    return kept && this.now() - kept.at < RECENT_MS ? kept.frames : [];
  }
}

/** A run's stored events with its kept frames in their places: each right after the event it follows. */
export async function* withFrames(batches: AsyncIterable<LoggedEvent[]>, frames: readonly GraphFrame[]): AsyncGenerator<Array<LoggedEvent | GraphFrame>> {
  let next = 0;
  for await (const batch of batches) {
    if (next >= frames.length) {
      yield batch;
      continue;
    }
    const out: Array<LoggedEvent | GraphFrame> = [];
    for (const e of batch) {
      while (next < frames.length && frames[next]!.after < e.seq) out.push(frames[next++]!);
      out.push(e);
    }
    yield out;
  }
}
