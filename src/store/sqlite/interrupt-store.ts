import { interruptFromRow, type InterruptRow, questionsColumn } from "../interrupt-records.js";
import type { InterruptRecord, InterruptStatus, InterruptStore, InterruptTransition, NewInterrupt, OpenInterrupt, ProgressWrite } from "../types.js";
import { type Clock, systemClock } from "../../clock.js";
import type { SqliteConn } from "./sqlite-conn.js";

/** Interrupt records in SQLite. Transitions out of `waiting_human` are compare-and-set: one decider wins. */
export class SqliteInterruptStore implements InterruptStore {
  private readonly q;

  /** `keyedHash`: the audit's keyed hash, for records written before calls carried one. */
  constructor(
    private readonly conn: SqliteConn,
    private readonly keyedHash: (v: unknown) => string,
    private readonly clock: Clock = systemClock,
  ) {
    const { db } = conn;
    this.q = {
      insert: db.prepare(
        "INSERT INTO interrupts (interrupt_id, thread_id, run_id, calls, status, created_at, expires_at, requester, questions, escalate_at) VALUES (?, ?, ?, ?, 'waiting_human', ?, ?, ?, ?, ?)",
      ),
      get: db.prepare<[string], InterruptRow>("SELECT * FROM interrupts WHERE interrupt_id = ?"),
      transition: db.prepare(
        "UPDATE interrupts SET status = ?, decided_at = ?, decisions = ? WHERE interrupt_id = ? AND status = 'waiting_human' AND (? IS NULL OR expires_at > ?)",
      ),
      reopen: db.prepare(
        "UPDATE interrupts SET status = 'waiting_human', decided_at = NULL, decisions = NULL, progress = NULL, progress_seq = progress_seq + 1 WHERE interrupt_id = ? AND status IN ('resumed', 'rejected')",
      ),
      expired: db.prepare<[number], InterruptRow>(
        "SELECT * FROM interrupts WHERE status = 'waiting_human' AND expires_at <= ? ORDER BY expires_at",
      ),
      dueEscalations: db.prepare<[number, number], InterruptRow>(
        "SELECT * FROM interrupts WHERE status = 'waiting_human' AND escalated_at IS NULL AND escalate_at <= ? AND expires_at > ? ORDER BY escalate_at",
      ),
      recordProgress: db.prepare(
        "UPDATE interrupts SET progress = ?, progress_seq = progress_seq + 1 WHERE interrupt_id = ? AND status = 'waiting_human' AND progress_seq = ? AND expires_at > ?",
      ),
      markEscalated: db.prepare(
        "UPDATE interrupts SET escalated_at = ? WHERE interrupt_id = ? AND status = 'waiting_human' AND escalated_at IS NULL AND escalate_at IS NOT NULL",
      ),
      countOpen: db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM interrupts WHERE status = 'waiting_human' AND expires_at > ?"),
      open: db.prepare<[number], InterruptRow & { owner: string }>(
        `SELECT i.*, t.owner FROM interrupts i JOIN threads t ON t.thread_id = i.thread_id
         WHERE i.status = 'waiting_human' AND i.expires_at > ? ORDER BY i.expires_at, i.interrupt_id`,
      ),
    };
  }

  async create(r: NewInterrupt): Promise<void> {
    await this.conn.lock.gate(() =>
      this.q.insert.run(r.interrupt_id, r.thread_id, r.run_id, JSON.stringify(r.calls), r.created_at, r.expires_at, r.requester, questionsColumn(r), r.escalate_at),
    );
  }

  get(interruptId: string): Promise<InterruptRecord | undefined> {
    return this.conn.lock.gate(() => {
      const row = this.q.get.get(interruptId);
      return row ? interruptFromRow(row, this.keyedHash) : undefined;
    });
  }

  transition(interruptId: string, to: Exclude<InterruptStatus, "waiting_human">, { decisions, before }: InterruptTransition = {}): Promise<boolean> {
    const d = decisions === undefined ? null : JSON.stringify(decisions);
    const b = before ?? null;
    return this.conn.lock.gate(() => this.q.transition.run(to, this.clock.now(), d, interruptId, b, b).changes === 1);
  }

  reopen(interruptId: string): Promise<boolean> {
    return this.conn.lock.gate(() => this.q.reopen.run(interruptId).changes === 1);
  }

  listExpired(now: number): Promise<InterruptRecord[]> {
    return this.conn.lock.gate(() => this.q.expired.all(now).map((r) => interruptFromRow(r, this.keyedHash)));
  }

  listDueEscalations(now: number): Promise<InterruptRecord[]> {
    return this.conn.lock.gate(() => this.q.dueEscalations.all(now, now).map((r) => interruptFromRow(r, this.keyedHash)));
  }

  recordProgress(interruptId: string, { seenSeq, progress, before }: ProgressWrite): Promise<boolean> {
    return this.conn.lock.gate(() => this.q.recordProgress.run(JSON.stringify(progress), interruptId, seenSeq, before).changes === 1);
  }

  markEscalated(interruptId: string, at: number): Promise<boolean> {
    return this.conn.lock.gate(() => this.q.markEscalated.run(at, interruptId).changes === 1);
  }

  countOpen(now: number): Promise<number> {
    return this.conn.lock.gate(() => this.q.countOpen.get(now)!.n);
  }

  listOpen(now: number): Promise<OpenInterrupt[]> {
    return this.conn.lock.gate(() => this.q.open.all(now).map((r) => ({ ...interruptFromRow(r, this.keyedHash), owner: r.owner })));
  }
}
