import type { IdleClaim, NewThreadOptions, ThreadRelease, ThreadRow, ThreadStore } from "../types.js";
import { changedOne, type Queryable } from "./queryable.js";
import { type Clock, systemClock } from "../../clock.js";

/**
 * Threads in PostgreSQL. Every status change is one compare-and-set UPDATE: under READ COMMITTED a
 * second UPDATE of the same row waits for the first to commit and then re-checks its WHERE against
 * the new row, so of two claims arriving together exactly one changes it.
 */
export class PgThreadStore implements ThreadStore {
  /** `replicaId`: this process's replica id, recorded on the threads it holds. */
  constructor(
    private readonly q: Queryable,
    private readonly replicaId: string,
    private readonly clock: Clock = systemClock,
  ) {}

  async copy(from: string, to: string, owner: string): Promise<boolean> {
    // One statement, so one transaction wherever it runs: a copy without its ledger could run a settled call again.
    const copied = "EXISTS (SELECT 1 FROM t)";
    const r = await this.q.query<{ n: string }>(
      `WITH t AS (
         INSERT INTO threads (thread_id, status, last_outcome, metadata, owner, title, graph_id, created_at, updated_at)
         SELECT $2, 'idle', last_outcome, metadata, $3, title, graph_id, $4, $4 FROM threads WHERE thread_id = $1 AND status = 'idle'
         ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id),
       c AS (
         INSERT INTO "public".checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM "public".checkpoints WHERE thread_id = $1 AND ${copied}),
       b AS (
         INSERT INTO "public".checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
         SELECT $2, checkpoint_ns, channel, version, type, blob FROM "public".checkpoint_blobs WHERE thread_id = $1 AND ${copied}),
       w AS (
         INSERT INTO "public".checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
         SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM "public".checkpoint_writes WHERE thread_id = $1 AND ${copied}),
       a AS (
         INSERT INTO audit (thread_id, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at, preview_hash, version)
         SELECT $2, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at, preview_hash, version
         FROM audit WHERE thread_id = $1 AND ${copied} ORDER BY id),
       l AS (
         INSERT INTO ledger (key, thread_id, call_id, name, args_hash, status, outcome, started_at, settled_at)
         SELECT $2 || ':' || call_id, $2, call_id, name, args_hash, status, outcome, started_at, settled_at FROM ledger WHERE thread_id = $1 AND ${copied})
       SELECT count(*) AS n FROM t`,
      [from, to, owner, this.clock.now()],
    );
    return Number(r.rows[0]?.n) === 1;
  }

  async get(threadId: string): Promise<ThreadRow | undefined> {
    const { rows } = await this.q.query<ThreadRow>("SELECT * FROM threads WHERE thread_id = $1", [threadId]);
    return rows[0];
  }

  async create(threadId: string, owner: string, { metadata = {}, graphId = "agent" }: NewThreadOptions = {}): Promise<boolean> {
    const now = this.clock.now();
    const r = await this.q.query(
      `INSERT INTO threads (thread_id, metadata, owner, graph_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (thread_id) DO NOTHING`,
      [threadId, JSON.stringify(metadata), owner, graphId, now],
    );
    return changedOne(r);
  }

  async ensure(threadId: string, owner: string, graphId = "agent"): Promise<ThreadRow> {
    const now = this.clock.now();
    // A concurrent insert of the same id is waited for, so the read below sees one row either way.
    // DO NOTHING: an existing thread keeps its graph; the caller compares.
    await this.q.query(
      `INSERT INTO threads (thread_id, metadata, owner, graph_id, created_at, updated_at) VALUES ($1, '{}', $2, $3, $4, $4)
       ON CONFLICT (thread_id) DO NOTHING`,
      [threadId, owner, graphId, now],
    );
    return (await this.get(threadId))!;
  }

  async setTitle(threadId: string, title: string): Promise<void> {
    await this.q.query("UPDATE threads SET title = $1 WHERE thread_id = $2 AND title IS NULL", [title, threadId]);
  }

  async list(owner: string | null, limit: number, after?: { updatedAt: number; threadId: string }): Promise<ThreadRow[]> {
    // Keyset pagination on (updated_at, thread_id), newest first; owner NULL = every thread.
    const at = after?.updatedAt ?? Number.MAX_SAFE_INTEGER;
    const { rows } = await this.q.query<ThreadRow>(
      `SELECT * FROM threads WHERE ($1::text IS NULL OR owner = $1)
         AND (updated_at < $2 OR (updated_at = $2 AND thread_id < $3))
       ORDER BY updated_at DESC, thread_id DESC LIMIT $4`,
      [owner, at, after?.threadId ?? "", limit],
    );
    return rows;
  }

  async claimIdle(threadId: string, runId: string): Promise<IdleClaim> {
    const r = await this.q.query(
      `UPDATE threads SET status = 'running', holder_id = $1, latest_run_id = $1, replica_id = $2, updated_at = $3
       WHERE thread_id = $4 AND status = 'idle'`,
      [runId, this.replicaId, this.clock.now(), threadId],
    );
    if (changedOne(r)) return { ok: true };
    const t = await this.get(threadId);
    return { ok: false, reason: !t ? "not_found" : t.status === "waiting_human" ? "awaiting_approval" : "busy" };
  }

  async claimWaiting(threadId: string, holderId: string, asRun: boolean): Promise<boolean> {
    // A closer holds the thread without becoming its latest run: replays keep showing the run.
    const r = await this.q.query(
      `UPDATE threads SET status = 'running', holder_id = $1, latest_run_id = COALESCE($2, latest_run_id),
         replica_id = $3, open_interrupt_id = NULL, updated_at = $4
       WHERE thread_id = $5 AND status = 'waiting_human'`,
      [holderId, asRun ? holderId : null, this.replicaId, this.clock.now(), threadId],
    );
    return changedOne(r);
  }

  async release(threadId: string, holderId: string, { to, lastOutcome, openInterruptId = null }: ThreadRelease): Promise<boolean> {
    // The replica too: once a survivor has adopted the thread (this replica's lease ran out), a
    // late release from here must not free it under the adopter's feet.
    const r = await this.q.query(
      `UPDATE threads SET status = $1, holder_id = NULL, replica_id = NULL, last_outcome = COALESCE($2, last_outcome),
         open_interrupt_id = $3, updated_at = $4
       WHERE thread_id = $5 AND status = 'running' AND holder_id = $6 AND replica_id = $7`,
      [to, lastOutcome, openInterruptId, this.clock.now(), threadId, holderId, this.replicaId],
    );
    return changedOne(r);
  }

  async listRunning(): Promise<ThreadRow[]> {
    const { rows } = await this.q.query<ThreadRow>("SELECT * FROM threads WHERE status = 'running'");
    return rows;
  }
}
