import type { LoggedEvent } from "../../store/index.js";
import type { RunContext } from "../run-context.js";
import type { GraphFrame } from "./graph-frames.js";
import { withFrames } from "./recent-frames.js";
import { followStoredRun } from "./remote-run.js";

/** Event batches of a run after `o.afterSeq`: live ones as they come, or the stored log of a finished run. */
export function runEvents(ctx: Pick<RunContext, "inFlight" | "store">, o: { runId: string; afterSeq: number; signal?: AbortSignal }): AsyncGenerator<LoggedEvent[]> {
  const { runId, afterSeq, signal } = o;
  // The follower itself, not a generator around it: a wrapper's `yield*` costs promises per batch.
  const live = ctx.inFlight.logs.get(runId);
  return live ? live.follow(afterSeq, signal) : followStoredRun(ctx.store, runId, { afterSeq, signal });
}

/**
 * A run's events from its start with the frames of its graph's stream that it records (see
 * `FrameRequest`), while the run is live in this process or ended here lately (`RecentFrames`);
 * otherwise its stored events alone.
 */
export function runEventsWithFrames(ctx: Pick<RunContext, "inFlight" | "store">, o: { runId: string; signal?: AbortSignal }): AsyncGenerator<Array<LoggedEvent | GraphFrame>> {
  const { runId, signal } = o;
  const { logs, recentFrames } = ctx.inFlight;
  const live = logs.get(runId);
  if (live) return live.followWithFrames(signal);
  const stored = followStoredRun(ctx.store, runId, { afterSeq: -1, signal });
  const frames = recentFrames.of(runId);
  return frames.length ? withFrames(stored, frames) : stored;
}

/** Whether a stream after `o.afterSeq` has anything to send: false once the terminal event is behind it. */
export async function hasEventsAfter(ctx: Pick<RunContext, "inFlight" | "store">, o: { runId: string; afterSeq: number }): Promise<boolean> {
  const { runId, afterSeq } = o;
  const live = ctx.inFlight.logs.get(runId);
  if (live) return live.hasEventsAfter(afterSeq);
  const { runs } = ctx.store;
  // The row before the log (see `followStoredRun`): an end committed in between is not missed.
  const row = await runs.get(runId);
  if ((await runs.maxSeq(runId)) > afterSeq) return true;
  // Running on another replica: more is coming.
  return row !== undefined && row.ended_at === null;
}
