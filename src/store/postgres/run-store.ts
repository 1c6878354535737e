import { endsWithTerminal, eventsOfRows, splitBatches } from "../run-batches.js";
import type { LoggedEvent, NewRun, RunRow, RunStore } from "../types.js";
import { type Clock, systemClock } from "../../clock.js";
import { changedOne, inTransaction, type Queryable } from "./queryable.js";
import { encodeNotice, pgChannel } from "./replica-bus.js";

/**
 * Runs and their event logs in PostgreSQL. Each append sends a `run_events` notice from inside its
 * own transaction (`pg_notify`), so PostgreSQL delivers it to every replica exactly when the rows
 * are committed: a follower woken by it always finds them, and a rolled-back append wakes no one.
 */
export class PgRunStore implements RunStore {
  constructor(
    private readonly q: Queryable,
    private readonly clock: Clock = systemClock,
  ) {}

  async start(runId: string, threadId: string, { kind, input }: NewRun): Promise<void> {
    // One run in flight per thread: the next ordinal read here cannot race another start.
    await this.q.query(
      `INSERT INTO runs (run_id, thread_id, kind, started_at, input, ordinal)
       VALUES ($1, $2, $3, $4, $5, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM runs WHERE thread_id = $2))`, [
      runId,
      threadId,
      kind,
      this.clock.now(),
      input ?? null,
    ]);
  }

  async end(runId: string, outcome: string): Promise<boolean> {
    const r = await this.q.query("UPDATE runs SET ended_at = $1, outcome = $2 WHERE run_id = $3 AND ended_at IS NULL", [
      this.clock.now(),
      outcome,
      runId,
    ]);
    return changedOne(r);
  }

  async get(runId: string): Promise<RunRow | undefined> {
    const { rows } = await this.q.query<RunRow>("SELECT run_id, thread_id, started_at, ended_at, outcome, input, COALESCE(ordinal, 0) AS ordinal FROM runs WHERE run_id = $1", [runId]);
    return rows[0];
  }

  async listForThread(threadId: string, limit: number, offset: number): Promise<RunRow[]> {
    const { rows } = await this.q.query<RunRow>(
      "SELECT run_id, thread_id, started_at, ended_at, outcome, input, COALESCE(ordinal, 0) AS ordinal FROM runs WHERE thread_id = $1 ORDER BY COALESCE(ordinal, 0) DESC, started_at DESC, run_id LIMIT $2 OFFSET $3",
      [threadId, limit, offset],
    );
    return rows;
  }

  async appendBatches(batches: ReadonlyMap<string, readonly LoggedEvent[]>): Promise<void> {
    if (!batches.size) return;
    await inTransaction(this.q, async (tx) => {
      for (const [runId, events] of batches) {
        // A flush retried after an unknown commit outcome carries the same first events, maybe with
        // later ones merged in: the longer row wins, so nothing is written twice or lost.
        for (const b of splitBatches(events)) {
          await tx.query(
            `INSERT INTO run_event_batches (run_id, first_seq, last_seq, frames) VALUES ($1, $2, $3, $4)
             ON CONFLICT (run_id, first_seq) DO UPDATE SET last_seq = EXCLUDED.last_seq, frames = EXCLUDED.frames
             WHERE EXCLUDED.last_seq > run_event_batches.last_seq`,
            [runId, b.firstSeq, b.lastSeq, b.frames],
          );
        }
        await tx.query("SELECT pg_notify($1, $2)", [pgChannel("run_events"), encodeNotice(runId, "")]);
      }
    });
  }

  append(runId: string, events: readonly LoggedEvent[]): Promise<void> {
    return this.appendBatches(new Map([[runId, events]]));
  }

  async read(runId: string, afterSeq: number): Promise<LoggedEvent[]> {
    const { rows } = await this.q.query<{ first_seq: number; frames: string }>(
      "SELECT first_seq, frames FROM run_event_batches WHERE run_id = $1 AND last_seq > $2 ORDER BY first_seq",
      [runId, afterSeq],
    );
    return eventsOfRows(rows, afterSeq);
  }

  async maxSeq(runId: string): Promise<number> {
    const { rows } = await this.q.query<{ m: number | null }>("SELECT MAX(last_seq) AS m FROM run_event_batches WHERE run_id = $1", [
      runId,
    ]);
    return rows[0]?.m ?? -1;
  }

  async hasTerminal(runId: string): Promise<boolean> {
    const { rows } = await this.q.query<{ frames: string }>(
      "SELECT frames FROM run_event_batches WHERE run_id = $1 ORDER BY last_seq DESC LIMIT 1",
      [runId],
    );
    return endsWithTerminal(rows[0]?.frames);
  }

  async listUnheld(): Promise<Array<{ run_id: string; thread_id: string }>> {
    const { rows } = await this.q.query<{ run_id: string; thread_id: string }>(
      `SELECT r.run_id, r.thread_id FROM runs r WHERE r.ended_at IS NULL AND NOT EXISTS (
         SELECT 1 FROM threads t WHERE t.thread_id = r.thread_id AND t.status = 'running' AND t.holder_id = r.run_id)`,
    );
    return rows;
  }

  async prune(threadId: string, keep: number): Promise<void> {
    // OFFSET without LIMIT: every finished run after the `keep` latest (SQLite spells it LIMIT -1).
    await this.q.query(
      `DELETE FROM run_event_batches WHERE run_id IN (
         SELECT run_id FROM runs WHERE thread_id = $1 AND ended_at IS NOT NULL
         ORDER BY started_at DESC OFFSET $2)`,
      [threadId, keep],
    );
  }
}
