import { endsWithTerminal, eventsOfRows, splitBatches } from "../run-batches.js";
import type { LoggedEvent, ReplicaBus, NewRun, RunRow, RunStore } from "../types.js";
import { type Clock, systemClock } from "../../clock.js";
import type { SqliteConn } from "./sqlite-conn.js";

/** Runs and their event logs (for `Last-Event-ID` replay) in SQLite. */
export class SqliteRunStore implements RunStore {
  private readonly q;
  private readonly insertMany;

  constructor(
    private readonly conn: SqliteConn,
    private readonly bus: ReplicaBus,
    private readonly clock: Clock = systemClock,
  ) {
    const { db } = conn;
    this.q = {
      // One run in flight per thread: the next ordinal read here cannot race another start.
      start: db.prepare(
        `INSERT INTO runs (run_id, thread_id, kind, started_at, input, ordinal)
         VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM runs WHERE thread_id = ?))`,
      ),
      end: db.prepare("UPDATE runs SET ended_at = ?, outcome = ? WHERE run_id = ? AND ended_at IS NULL"),
      get: db.prepare<[string], RunRow>("SELECT run_id, thread_id, started_at, ended_at, outcome, input, COALESCE(ordinal, 0) AS ordinal FROM runs WHERE run_id = ?"),
      listForThread: db.prepare<[string, number, number], RunRow>(
        "SELECT run_id, thread_id, started_at, ended_at, outcome, input, COALESCE(ordinal, 0) AS ordinal FROM runs WHERE thread_id = ? ORDER BY COALESCE(ordinal, 0) DESC, started_at DESC, run_id LIMIT ? OFFSET ?",
      ),
      insert: db.prepare(
        // A flush retried after a failed write carries the same first events, maybe with later ones
        // merged in: the longer row wins, so nothing is written twice or lost.
        `INSERT INTO run_event_batches (run_id, first_seq, last_seq, frames) VALUES (?, ?, ?, ?)
         ON CONFLICT (run_id, first_seq) DO UPDATE SET last_seq = excluded.last_seq, frames = excluded.frames
         WHERE excluded.last_seq > run_event_batches.last_seq`,
      ),
      read: db.prepare<[string, number], { first_seq: number; frames: string }>(
        "SELECT first_seq, frames FROM run_event_batches WHERE run_id = ? AND last_seq > ? ORDER BY first_seq",
      ),
      maxSeq: db.prepare<[string], { m: number | null }>("SELECT MAX(last_seq) AS m FROM run_event_batches WHERE run_id = ?"),
      lastBatch: db.prepare<[string], { frames: string }>(
        "SELECT frames FROM run_event_batches WHERE run_id = ? ORDER BY last_seq DESC LIMIT 1",
      ),
      unheld: db.prepare<[], { run_id: string; thread_id: string }>(
        `SELECT r.run_id, r.thread_id FROM runs r WHERE r.ended_at IS NULL AND NOT EXISTS (
           SELECT 1 FROM threads t WHERE t.thread_id = r.thread_id AND t.status = 'running' AND t.holder_id = r.run_id)`,
      ),
      prune: db.prepare(
        `DELETE FROM run_event_batches WHERE run_id IN (
           SELECT run_id FROM runs WHERE thread_id = ? AND ended_at IS NOT NULL
           ORDER BY started_at DESC LIMIT -1 OFFSET ?)`,
      ),
    };
    this.insertMany = db.transaction((batches: ReadonlyMap<string, readonly LoggedEvent[]>) => {
      for (const [runId, events] of batches) {
        for (const b of splitBatches(events)) this.q.insert.run(runId, b.firstSeq, b.lastSeq, b.frames);
      }
    });
  }

  async start(runId: string, threadId: string, { kind, input }: NewRun): Promise<void> {
    await this.conn.lock.gate(() => this.q.start.run(runId, threadId, kind, this.clock.now(), input ?? null, threadId));
  }

  end(runId: string, outcome: string): Promise<boolean> {
    return this.conn.lock.gate(() => this.q.end.run(this.clock.now(), outcome, runId).changes === 1);
  }

  get(runId: string): Promise<RunRow | undefined> {
    return this.conn.lock.gate(() => this.q.get.get(runId));
  }

  listForThread(threadId: string, limit: number, offset: number): Promise<RunRow[]> {
    return this.conn.lock.gate(() => this.q.listForThread.all(threadId, limit, offset));
  }

  async appendBatches(batches: ReadonlyMap<string, readonly LoggedEvent[]>): Promise<void> {
    if (!batches.size) return;
    await this.conn.lock.gate(() => this.insertMany(batches));
    // Inside a transaction this comes before its commit; a reader then waits for the lock anyway.
    for (const runId of batches.keys()) void this.bus.publish("run_events", runId);
  }

  append(runId: string, events: readonly LoggedEvent[]): Promise<void> {
    return this.appendBatches(new Map([[runId, events]]));
  }

  read(runId: string, afterSeq: number): Promise<LoggedEvent[]> {
    return this.conn.lock.gate(() => eventsOfRows(this.q.read.all(runId, afterSeq), afterSeq));
  }

  maxSeq(runId: string): Promise<number> {
    return this.conn.lock.gate(() => this.q.maxSeq.get(runId)?.m ?? -1);
  }

  hasTerminal(runId: string): Promise<boolean> {
    return this.conn.lock.gate(() => endsWithTerminal(this.q.lastBatch.get(runId)?.frames));
  }

  listUnheld(): Promise<Array<{ run_id: string; thread_id: string }>> {
    return this.conn.lock.gate(() => this.q.unheld.all());
  }

  async prune(threadId: string, keep: number): Promise<void> {
    await this.conn.lock.gate(() => this.q.prune.run(threadId, keep));
  }
}
