import { type EventType, TERMINAL_TYPES } from "../protocol/index.js";
import type { LoggedEvent } from "./types.js";

/** One stored row of a run's log: consecutive events, one "type<TAB>data" line each. */
export interface EventBatchRow {
  firstSeq: number;
  lastSeq: number;
  frames: string;
}

/** A run's events as rows: consecutive seqs share a row; a gap (a settler's jump) starts a new one. */
export function splitBatches(events: readonly LoggedEvent[]): EventBatchRow[] {
  const rows: EventBatchRow[] = [];
  let start = 0;
  for (let i = 1; i <= events.length; i++) {
    if (i < events.length && events[i]!.seq === events[i - 1]!.seq + 1) continue;
    const part = events.slice(start, i);
    rows.push({ firstSeq: part[0]!.seq, lastSeq: part.at(-1)!.seq, frames: part.map((e) => `${e.type}\t${e.data}`).join("\n") });
    start = i;
  }
  return rows;
}

/** The events of stored rows (in `first_seq` order) after `afterSeq`. */
export function eventsOfRows(rows: ReadonlyArray<{ first_seq: number; frames: string }>, afterSeq: number): LoggedEvent[] {
  const out: LoggedEvent[] = [];
  for (const row of rows) {
    let seq = row.first_seq;
    for (const line of row.frames.split("\n")) {
      if (seq > afterSeq) {
        const tab = line.indexOf("\t");
        out.push({ seq, type: line.slice(0, tab) as EventType, data: line.slice(tab + 1) });
      }
      seq++;
    }
  }
  return out;
}

/** Whether the frames of a run's last row end with a terminal event. */
export function endsWithTerminal(frames: string | undefined): boolean {
  if (frames === undefined) return false;
  const last = frames.slice(frames.lastIndexOf("\n") + 1);
  return (TERMINAL_TYPES as readonly string[]).includes(last.slice(0, last.indexOf("\t")));
}
