import { AppError, threadNotFound, type LastOutcome, type ThreadStatus } from "../protocol/index.js";
import type { Db } from "./database.js";

export type { LastOutcome, ThreadStatus } from "../protocol/index.js";

export interface ThreadRow {
  thread_id: string;
  status: ThreadStatus;
  last_outcome: LastOutcome | null;
  latest_run_id: string | null;
  holder_id: string | null;
  open_interrupt_id: string | null;
  metadata: string;
  /** The principal that created it. */
  owner: string;
  title: string | null;
  created_at: number;
  updated_at: number;
}

/** Threads and their status. Every status change is a compare-and-set in SQL. */
export class ThreadStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.prepare<[string], ThreadRow>("SELECT * FROM threads WHERE thread_id = ?"),
      insert: db.prepare(
        "INSERT OR IGNORE INTO threads (thread_id, metadata, owner, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      ),
      title: db.prepare("UPDATE threads SET title = ? WHERE thread_id = ? AND title IS NULL"),
      // Keyset pagination on (updated_at, thread_id), newest first; owner NULL = every thread.
      list: db.prepare<[string | null, string | null, number, number, string, number], ThreadRow>(
        `SELECT * FROM threads WHERE (? IS NULL OR owner = ?)
           AND (updated_at < ? OR (updated_at = ? AND thread_id < ?))
         ORDER BY updated_at DESC, thread_id DESC LIMIT ?`,
      ),
      claim: db.prepare(
        "UPDATE threads SET status = 'running', holder_id = ?, latest_run_id = ?, updated_at = ? WHERE thread_id = ? AND status = 'idle'",
      ),
      // A closer holds the thread without becoming its latest run: replays keep showing the run.
      claimWaiting: db.prepare(
        "UPDATE threads SET status = 'running', holder_id = ?, latest_run_id = COALESCE(?, latest_run_id), open_interrupt_id = NULL, updated_at = ? WHERE thread_id = ? AND status = 'waiting_human'",
      ),
      release: db.prepare(
        "UPDATE threads SET status = ?, holder_id = NULL, last_outcome = COALESCE(?, last_outcome), open_interrupt_id = ?, updated_at = ? WHERE thread_id = ? AND status = 'running' AND holder_id = ?",
      ),
      running: db.prepare<[], ThreadRow>("SELECT * FROM threads WHERE status = 'running'"),
    };
  }

  get(threadId: string): ThreadRow | undefined {
    return this.q.get.get(threadId);
  }

  /** Creates the thread owned by `owner`; false (nothing written) if the id is taken. */
  create(threadId: string, owner: string, metadata: Record<string, unknown> = {}): boolean {
    const now = Date.now();
    return this.q.insert.run(threadId, JSON.stringify(metadata), owner, now, now).changes === 1;
  }

  /** The thread, created for `owner` if it did not exist. */
  ensure(threadId: string, owner: string): ThreadRow {
    const now = Date.now();
    this.q.insert.run(threadId, "{}", owner, now, now);
    return this.get(threadId)!;
  }

  /** Sets the title unless it has one (the first user message names the thread). */
  setTitle(threadId: string, title: string): void {
    this.q.title.run(title, threadId);
  }

  /** Threads newest first, after the `(updated_at, thread_id)` cursor; all owners when `owner` is null. */
  list(owner: string | null, limit: number, after?: { updatedAt: number; threadId: string }): ThreadRow[] {
    const at = after?.updatedAt ?? Number.MAX_SAFE_INTEGER;
    return this.q.list.all(owner, owner, at, at, after?.threadId ?? "", limit);
  }

  /**
   * idle → running for a new message. Throws `thread_busy` or `awaiting_approval`; atomic, so
   * of two requests arriving together exactly one wins.
   */
  claimIdle(threadId: string, runId: string): void {
    if (this.q.claim.run(runId, runId, Date.now(), threadId).changes === 1) return;
    const t = this.get(threadId);
    if (!t) throw threadNotFound(threadId);
    if (t.status === "waiting_human") {
      throw new AppError("awaiting_approval", "This thread is waiting for approval: resume or cancel it first");
    }
    throw new AppError("thread_busy", "A run is already in flight on this thread");
  }

  /**
   * waiting_human → running, for a resume (`asRun`: it becomes the latest run) or for closing
   * an interrupt; false if another won.
   */
  claimWaiting(threadId: string, holderId: string, asRun: boolean): boolean {
    return this.q.claimWaiting.run(holderId, asRun ? holderId : null, Date.now(), threadId).changes === 1;
  }

  /** running → idle | waiting_human, only by whoever holds the thread. */
  release(
    threadId: string,
    holderId: string,
    to: Exclude<ThreadStatus, "running">,
    lastOutcome: LastOutcome | null,
    openInterruptId: string | null = null,
  ): boolean {
    return this.q.release.run(to, lastOutcome, openInterruptId, Date.now(), threadId, holderId).changes === 1;
  }

  listRunning(): ThreadRow[] {
    return this.q.running.all();
  }
}
