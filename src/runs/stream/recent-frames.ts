import type { Clock } from "../../clock.js";
import type { LoggedEvent } from "../../protocol/index.js";
import type { GraphFrame } from "./graph-frames.js";

/** How long an ended run keeps its frames: enough for a client's replay right after. */
const RECENT_MS = 5 * 60_000;
/** At most this many runs, and frames in all, are kept; the oldest runs go first. */
const RECENT_RUNS = 256;
const RECENT_FRAMES = 20_000;

/**
 * The frames of runs that ended in this process, for a while: a stream opened after the run ended
 * replays them in their places. LangGraph's clients rely on that: the SDK's `ThreadStream` reopens
 * its stream from the run's start whenever a subscription widens it, and closes the old one, so a
 * run that ends in between would lose the frames the old stream had not delivered yet.
 */
export class RecentFrames {
  /** In the order kept, so the oldest comes first. */
  private readonly byRun = new Map<string, { frames: readonly GraphFrame[]; at: number }>();
  private count = 0;

  constructor(private readonly clock: Clock) {}

  keep(runId: string, frames: readonly GraphFrame[]): void {
    if (!frames.length) return;
    this.byRun.set(runId, { frames, at: this.clock.now() });
    this.count += frames.length;
    this.dropOld();
  }

  /** A run's frames while they are kept; none after that. */
  of(runId: string): readonly GraphFrame[] {
    this.dropOld();
    return this.byRun.get(runId)?.frames ?? [];
  }

  private dropOld(): void {
    const now = this.clock.now();
    for (const [id, kept] of this.byRun) {
      if (this.byRun.size <= RECENT_RUNS && this.count <= RECENT_FRAMES && now - kept.at < RECENT_MS) return;
      this.byRun.delete(id);
      this.count -= kept.frames.length;
    }
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
  // After the last stored event, as a live log would send them.
  if (next < frames.length) yield frames.slice(next);
}
