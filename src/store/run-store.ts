import { type EventType, TERMINAL_TYPES } from "../protocol/index.js";
import type { Db } from "./database.js";

export type RunKind = "message" | "resume";

/** One logged event: its JSON `data` is kept as the exact string that went on the wire. */
export interface LoggedEvent {
  seq: number;
  type: EventType;
  data: string;
}

/** Runs and their event logs (for `Last-Event-ID` replay). */
export class RunStore {
  private readonly q;
  private readonly insertMany;

  constructor(db: Db) {
    this.q = {
      start: db.prepare("INSERT INTO runs (run_id, thread_id, kind, started_at) VALUES (?, ?, ?, ?)"),
      end: db.prepare("UPDATE runs SET ended_at = ?, outcome = ? WHERE run_id = ? AND ended_at IS NULL"),
      get: db.prepare<[string], { run_id: string; thread_id: string; ended_at: number | null; outcome: string | null }>(
        "SELECT run_id, thread_id, ended_at, outcome FROM runs WHERE run_id = ?",
      ),
      insert: db.prepare(
        "INSERT OR IGNORE INTO run_event_batches (run_id, first_seq, last_seq, frames) VALUES (?, ?, ?, ?)",
      ),
      read: db.prepare<[string, number], { first_seq: number; frames: string }>(
        "SELECT first_seq, frames FROM run_event_batches WHERE run_id = ? AND last_seq > ? ORDER BY first_seq",
      ),
      maxSeq: db.prepare<[string], { m: number | null }>("SELECT MAX(last_seq) AS m FROM run_event_batches WHERE run_id = ?"),
      lastBatch: db.prepare<[string], { frames: string }>(
        "SELECT frames FROM run_event_batches WHERE run_id = ? ORDER BY last_seq DESC LIMIT 1",
      ),
      open: db.prepare<[], { run_id: string; thread_id: string }>("SELECT run_id, thread_id FROM runs WHERE ended_at IS NULL"),
      prune: db.prepare(
        `DELETE FROM run_event_batches WHERE run_id IN (
           SELECT run_id FROM runs WHERE thread_id = ? AND ended_at IS NOT NULL
           ORDER BY started_at DESC LIMIT -1 OFFSET ?)`,
      ),
    };
    this.insertMany = db.transaction((batches: ReadonlyMap<string, readonly LoggedEvent[]>) => {
      for (const [runId, events] of batches) {
        // A batch holds consecutive events of one run; a gap (recovery's jump) starts a new row.
        let start = 0;
        for (let i = 1; i <= events.length; i++) {
          if (i < events.length && events[i]!.seq === events[i - 1]!.seq + 1) continue;
          const part = events.slice(start, i);
          this.q.insert.run(runId, part[0]!.seq, part.at(-1)!.seq, part.map((e) => `${e.type}\t${e.data}`).join("\n"));
          start = i;
        }
      }
    });
  }

  start(runId: string, threadId: string, kind: RunKind): void {
    this.q.start.run(runId, threadId, kind, Date.now());
  }

  end(runId: string, outcome: string): void {
    this.q.end.run(Date.now(), outcome, runId);
  }

  get(runId: string) {
    return this.q.get.get(runId);
  }

  /** One transaction for the whole batch: the log costs one commit per flush, not per token. */
  appendBatches(batches: ReadonlyMap<string, readonly LoggedEvent[]>): void {
    if (batches.size) this.insertMany(batches);
  }

  append(runId: string, events: readonly LoggedEvent[]): void {
    this.appendBatches(new Map([[runId, events]]));
  }

  read(runId: string, afterSeq: number): LoggedEvent[] {
    const out: LoggedEvent[] = [];
    for (const row of this.q.read.all(runId, afterSeq)) {
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

  maxSeq(runId: string): number {
    return this.q.maxSeq.get(runId)?.m ?? -1;
  }

  /** Whether the run's log ends with a terminal event. */
  hasTerminal(runId: string): boolean {
    const frames = this.q.lastBatch.get(runId)?.frames;
    if (frames === undefined) return false;
    const last = frames.slice(frames.lastIndexOf("\n") + 1);
    return (TERMINAL_TYPES as readonly string[]).includes(last.slice(0, last.indexOf("\t")));
  }

  /** Runs whose row was never closed. */
  listOpen(): Array<{ run_id: string; thread_id: string }> {
    return this.q.open.all();
  }

  /** Keeps the event logs of the thread's `keep` latest finished runs. */
  prune(threadId: string, keep: number): void {
    this.q.prune.run(threadId, keep);
  }
}
