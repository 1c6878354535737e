import type { IdleClaim, NewThreadOptions, ThreadRelease, ThreadRow, ThreadStore } from "../types.js";
import type { Statement } from "better-sqlite3";
import type { SqliteConn } from "./sqlite-conn.js";
import { type Clock, systemClock } from "../../clock.js";

/** Threads and their status in SQLite. Every status change is a compare-and-set in SQL. */
export class SqliteThreadStore implements ThreadStore {
  private readonly q;
  private copying: Record<"thread" | "checkpoints" | "writes" | "audit" | "ledger", Statement> | undefined;

  /** `replicaId`: this process, recorded on every thread it holds. */
  constructor(
    private readonly conn: SqliteConn,
    private readonly replicaId: string,
    private readonly clock: Clock = systemClock,
  ) {
    const { db } = conn;
    this.q = {
      get: db.prepare<[string], ThreadRow>("SELECT * FROM threads WHERE thread_id = ?"),
      insert: db.prepare(
        "INSERT OR IGNORE INTO threads (thread_id, metadata, owner, graph_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      title: db.prepare("UPDATE threads SET title = ? WHERE thread_id = ? AND title IS NULL"),
      // Keyset pagination on (updated_at, thread_id), newest first; owner NULL = every thread.
      list: db.prepare<[string | null, string | null, number, number, string, number], ThreadRow>(
        `SELECT * FROM threads WHERE (? IS NULL OR owner = ?)
           AND (updated_at < ? OR (updated_at = ? AND thread_id < ?))
         ORDER BY updated_at DESC, thread_id DESC LIMIT ?`,
      ),
      claim: db.prepare(
        "UPDATE threads SET status = 'running', holder_id = ?, replica_id = ?, latest_run_id = ?, updated_at = ? WHERE thread_id = ? AND status = 'idle'",
      ),
      // A closer holds the thread without becoming its latest run: replays keep showing the run.
      claimWaiting: db.prepare(
        "UPDATE threads SET status = 'running', holder_id = ?, replica_id = ?, latest_run_id = COALESCE(?, latest_run_id), open_interrupt_id = NULL, updated_at = ? WHERE thread_id = ? AND status = 'waiting_human'",
      ),
      release: db.prepare(
        "UPDATE threads SET status = ?, holder_id = NULL, replica_id = NULL, last_outcome = COALESCE(?, last_outcome), open_interrupt_id = ?, updated_at = ? WHERE thread_id = ? AND status = 'running' AND holder_id = ? AND replica_id IS ?",
      ),
      running: db.prepare<[], ThreadRow>("SELECT * FROM threads WHERE status = 'running'"),
    };
  }

  /** The copy's statements, made at first use: the checkpointer's tables are made after this store. */
  private copyStatements() {
    const { db } = this.conn;
    return (this.copying ??= {
      thread: db.prepare(
        `INSERT OR IGNORE INTO threads (thread_id, status, last_outcome, metadata, owner, title, graph_id, created_at, updated_at)
         SELECT @to, 'idle', last_outcome, metadata, @owner, title, graph_id, @now, @now FROM threads WHERE thread_id = @from AND status = 'idle'`,
      ),
      checkpoints: db.prepare(
        `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT @to, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = @from`,
      ),
      writes: db.prepare(
        `INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value)
         SELECT @to, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value FROM writes WHERE thread_id = @from`,
      ),
      audit: db.prepare(
        `INSERT INTO audit (thread_id, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at, preview_hash, version)
         SELECT @to, interrupt_id, call_id, tool, args_hash, edited_args_hash, decision, by_sub, reason, run_args_hash, at, preview_hash, version
         FROM audit WHERE thread_id = @from ORDER BY id`,
      ),
      ledger: db.prepare(
        `INSERT INTO ledger (key, thread_id, call_id, name, args_hash, status, outcome, started_at, settled_at)
         SELECT @to || ':' || call_id, @to, call_id, name, args_hash, status, outcome, started_at, settled_at FROM ledger WHERE thread_id = @from`,
      ),
    });
  }

  copy(from: string, to: string, owner: string): Promise<boolean> {
    const now = this.clock.now();
    const c = this.copyStatements();
    // One transaction (a savepoint inside the store's own): a copy without its ledger could run a settled call again.
    const copy = this.conn.db.transaction((args: { from: string; to: string; owner: string; now: number }) => {
      if (c.thread.run(args).changes !== 1) return false;
      const pair = { from: args.from, to: args.to };
      for (const stmt of [c.checkpoints, c.writes, c.audit, c.ledger]) stmt.run(pair);
      return true;
    });
    return this.conn.lock.gate(() => copy({ from, to, owner, now }));
  }

  get(threadId: string): Promise<ThreadRow | undefined> {
    return this.conn.lock.gate(() => this.q.get.get(threadId));
  }

  create(threadId: string, owner: string, { metadata = {}, graphId = "agent" }: NewThreadOptions = {}): Promise<boolean> {
    const now = this.clock.now();
    return this.conn.lock.gate(() => this.q.insert.run(threadId, JSON.stringify(metadata), owner, graphId, now, now).changes === 1);
  }

  ensure(threadId: string, owner: string, graphId = "agent"): Promise<ThreadRow> {
    const now = this.clock.now();
    return this.conn.lock.gate(() => {
      // OR IGNORE: an existing thread keeps its graph; the caller compares.
      this.q.insert.run(threadId, "{}", owner, graphId, now, now);
      return this.q.get.get(threadId)!;
    });
  }

  async setTitle(threadId: string, title: string): Promise<void> {
    await this.conn.lock.gate(() => this.q.title.run(title, threadId));
  }

  list(owner: string | null, limit: number, after?: { updatedAt: number; threadId: string }): Promise<ThreadRow[]> {
    const at = after?.updatedAt ?? Number.MAX_SAFE_INTEGER;
    return this.conn.lock.gate(() => this.q.list.all(owner, owner, at, at, after?.threadId ?? "", limit));
  }

  claimIdle(threadId: string, runId: string): Promise<IdleClaim> {
    return this.conn.lock.gate((): IdleClaim => {
      if (this.q.claim.run(runId, this.replicaId, runId, this.clock.now(), threadId).changes === 1) return { ok: true };
      const t = this.q.get.get(threadId);
      return { ok: false, reason: !t ? "not_found" : t.status === "waiting_human" ? "awaiting_approval" : "busy" };
    });
  }

  claimWaiting(threadId: string, holderId: string, asRun: boolean): Promise<boolean> {
    return this.conn.lock.gate(
      () => this.q.claimWaiting.run(holderId, this.replicaId, asRun ? holderId : null, this.clock.now(), threadId).changes === 1,
    );
  }

  release(threadId: string, holderId: string, { to, lastOutcome, openInterruptId = null }: ThreadRelease): Promise<boolean> {
    return this.conn.lock.gate(
      () => this.q.release.run(to, lastOutcome, openInterruptId, this.clock.now(), threadId, holderId, this.replicaId).changes === 1,
    );
  }

  listRunning(): Promise<ThreadRow[]> {
    return this.conn.lock.gate(() => this.q.running.all());
  }
}
