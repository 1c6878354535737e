import type { InterruptPayload } from "../protocol/index.js";
import type { Db } from "./database.js";

export type InterruptStatus = "waiting_human" | "resumed" | "rejected" | "expired" | "cancelled";

export interface InterruptCall {
  call_id: string;
  name: string;
  /** As shown to people: sensitive fields masked. */
  args: Record<string, unknown>;
  /** Hash of the full arguments; an approval is bound to it. */
  args_hash: string;
}

export interface InterruptRecord {
  interrupt_id: string;
  thread_id: string;
  run_id: string;
  calls: InterruptCall[];
  status: InterruptStatus;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

interface Row extends Omit<InterruptRecord, "calls"> {
  calls: string;
}

const fromRow = (r: Row): InterruptRecord => ({ ...r, calls: JSON.parse(r.calls) as InterruptCall[] });

/** Interrupt records. Transitions out of `waiting_human` are compare-and-set: one decider wins. */
export class InterruptStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(
        "INSERT INTO interrupts (interrupt_id, thread_id, run_id, calls, status, created_at, expires_at) VALUES (?, ?, ?, ?, 'waiting_human', ?, ?)",
      ),
      get: db.prepare<[string], Row>("SELECT * FROM interrupts WHERE interrupt_id = ?"),
      transition: db.prepare(
        "UPDATE interrupts SET status = ?, decided_at = ?, decisions = ? WHERE interrupt_id = ? AND status = 'waiting_human'",
      ),
      reopen: db.prepare(
        "UPDATE interrupts SET status = 'waiting_human', decided_at = NULL, decisions = NULL WHERE interrupt_id = ? AND status IN ('resumed', 'rejected')",
      ),
      expired: db.prepare<[number], Row>(
        "SELECT * FROM interrupts WHERE status = 'waiting_human' AND expires_at <= ? ORDER BY expires_at",
      ),
      nextDeadline: db.prepare<[], { t: number | null }>(
        "SELECT MIN(expires_at) AS t FROM interrupts WHERE status = 'waiting_human'",
      ),
    };
  }

  create(r: Omit<InterruptRecord, "status" | "decided_at">): void {
    this.q.insert.run(r.interrupt_id, r.thread_id, r.run_id, JSON.stringify(r.calls), r.created_at, r.expires_at);
  }

  get(interruptId: string): InterruptRecord | undefined {
    const row = this.q.get.get(interruptId);
    return row ? fromRow(row) : undefined;
  }

  /** waiting_human → `to`; false when it had already left waiting_human. */
  transition(interruptId: string, to: Exclude<InterruptStatus, "waiting_human">, decisions?: unknown): boolean {
    const d = decisions === undefined ? null : JSON.stringify(decisions);
    return this.q.transition.run(to, Date.now(), d, interruptId).changes === 1;
  }

  /**
   * resumed | rejected → waiting_human: a decision whose run failed on storage before anything
   * ran is not used up. Only the settler does this, holding the thread.
   */
  reopen(interruptId: string): boolean {
    return this.q.reopen.run(interruptId).changes === 1;
  }

  listExpired(now: number): InterruptRecord[] {
    return this.q.expired.all(now).map(fromRow);
  }

  /** The earliest open deadline, so the closer can sleep until then. */
  nextDeadline(): number | null {
    return this.q.nextDeadline.get()?.t ?? null;
  }
}

/** The interrupt as the `interrupt` event and `GET /threads/:id` show it. */
export function interruptPayload(r: InterruptRecord): InterruptPayload {
  return {
    thread_id: r.thread_id,
    interrupt_id: r.interrupt_id,
    calls: r.calls.map(({ call_id, name, args }) => ({ call_id, name, args })),
    expires_at: new Date(r.expires_at).toISOString(),
    resume_url: `/threads/${encodeURIComponent(r.thread_id)}/resume`,
  };
}
