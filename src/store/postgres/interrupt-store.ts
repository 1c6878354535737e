import { interruptFromRow, type InterruptRow, questionsColumn } from "../interrupt-records.js";
import type { InterruptRecord, InterruptStatus, InterruptStore, InterruptTransition, NewInterrupt, OpenInterrupt, ProgressWrite } from "../types.js";
import { type Clock, systemClock } from "../../clock.js";
import { changedOne, type Queryable } from "./queryable.js";

/** Interrupt records in PostgreSQL. Transitions out of `waiting_human` are compare-and-set: one decider wins. */
export class PgInterruptStore implements InterruptStore {
  /** `keyedHash`: the audit's keyed hash, for records written before calls carried one. */
  constructor(
    private readonly q: Queryable,
    private readonly keyedHash: (v: unknown) => string,
    private readonly clock: Clock = systemClock,
  ) {}

  async create(r: NewInterrupt): Promise<void> {
    await this.q.query(
      `INSERT INTO interrupts (interrupt_id, thread_id, run_id, calls, status, created_at, expires_at, requester, questions, escalate_at)
       VALUES ($1, $2, $3, $4, 'waiting_human', $5, $6, $7, $8, $9)`,
      [r.interrupt_id, r.thread_id, r.run_id, JSON.stringify(r.calls), r.created_at, r.expires_at, r.requester, questionsColumn(r), r.escalate_at],
    );
  }

  async get(interruptId: string): Promise<InterruptRecord | undefined> {
    const { rows } = await this.q.query<InterruptRow>("SELECT * FROM interrupts WHERE interrupt_id = $1", [interruptId]);
    return rows[0] ? interruptFromRow(rows[0], this.keyedHash) : undefined;
  }

  async transition(interruptId: string, to: Exclude<InterruptStatus, "waiting_human">, { decisions, before }: InterruptTransition = {}): Promise<boolean> {
    // With `before`, the deadline is checked in the same statement: a decision cannot win against
    // an expiry that the closer is about to record.
    const r = await this.q.query(
      `UPDATE interrupts SET status = $1, decided_at = $2, decisions = $3
       WHERE interrupt_id = $4 AND status = 'waiting_human' AND ($5::bigint IS NULL OR expires_at > $5)`,
      [to, this.clock.now(), decisions === undefined ? null : JSON.stringify(decisions), interruptId, before ?? null],
    );
    return changedOne(r);
  }

  async reopen(interruptId: string): Promise<boolean> {
    const r = await this.q.query(
      `UPDATE interrupts SET status = 'waiting_human', decided_at = NULL, decisions = NULL, progress = NULL, progress_seq = progress_seq + 1
       WHERE interrupt_id = $1 AND status IN ('resumed', 'rejected')`,
      [interruptId],
    );
    return changedOne(r);
  }

  async listExpired(now: number): Promise<InterruptRecord[]> {
    const { rows } = await this.q.query<InterruptRow>(
      `SELECT * FROM interrupts WHERE status = 'waiting_human' AND expires_at <= $1 ORDER BY expires_at`,
      [now],
    );
    return rows.map((r) => interruptFromRow(r, this.keyedHash));
  }

  async listDueEscalations(now: number): Promise<InterruptRecord[]> {
    const { rows } = await this.q.query<InterruptRow>(
      `SELECT * FROM interrupts
       WHERE status = 'waiting_human' AND escalated_at IS NULL AND escalate_at <= $1 AND expires_at > $1 ORDER BY escalate_at`,
      [now],
    );
    return rows.map((r) => interruptFromRow(r, this.keyedHash));
  }

  async recordProgress(interruptId: string, { seenSeq, progress, before }: ProgressWrite): Promise<boolean> {
    // Compare-and-set on the count: of two decisions read at the same count, one writes; the other
    // (blocked on the row until this commits) finds the count moved and changes nothing.
    const r = await this.q.query(
      `UPDATE interrupts SET progress = $1, progress_seq = progress_seq + 1
       WHERE interrupt_id = $2 AND status = 'waiting_human' AND progress_seq = $3 AND expires_at > $4`,
      [JSON.stringify(progress), interruptId, seenSeq, before],
    );
    return changedOne(r);
  }

  async markEscalated(interruptId: string, at: number): Promise<boolean> {
    // Compare-and-set: of replicas sweeping together, one sends the escalation.
    const r = await this.q.query(
      `UPDATE interrupts SET escalated_at = $1
       WHERE interrupt_id = $2 AND status = 'waiting_human' AND escalated_at IS NULL AND escalate_at IS NOT NULL`,
      [at, interruptId],
    );
    return changedOne(r);
  }

  async countOpen(now: number): Promise<number> {
    const { rows } = await this.q.query<{ n: string }>(
      "SELECT count(*) AS n FROM interrupts WHERE status = 'waiting_human' AND expires_at > $1",
      [now],
    );
    return Number(rows[0]!.n);
  }

  async listOpen(now: number): Promise<OpenInterrupt[]> {
    const { rows } = await this.q.query<InterruptRow & { owner: string }>(
      `SELECT i.*, t.owner FROM interrupts i JOIN threads t ON t.thread_id = i.thread_id
       WHERE i.status = 'waiting_human' AND i.expires_at > $1 ORDER BY i.expires_at, i.interrupt_id`,
      [now],
    );
    return rows.map((r) => ({ ...interruptFromRow(r, this.keyedHash), owner: r.owner }));
  }
}

