import type { InterruptPayload, PendingCall } from "../protocol/index.js";
import type { Db } from "./database.js";

export type InterruptStatus = "waiting_human" | "resumed" | "rejected" | "expired" | "cancelled";

/** A pending call as people are shown it (masked, with its policy), plus the hash binding approvals. */
export interface InterruptCall extends PendingCall {
  /** Hash of the full arguments; an approval is bound to it. */
  args_hash: string;
  /** Keyed hash of the full arguments, as the audit trail shows it. */
  audit_hash: string;
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
  /** Who sent the message that led to these calls (null in records of older versions). */
  requester: string | null;
}

interface Row extends Omit<InterruptRecord, "calls"> {
  calls: string;
}

/**
 * Calls stored by an older version, before policies: they need an approver (fail closed: the tool's
 * policy then is not known here), allow no edits, and get an audit hash keyed over the stored
 * plain hash (the arguments themselves are not at hand).
 */
function fromRow(r: Row, keyedHash: (v: unknown) => string): InterruptRecord {
  const calls = (JSON.parse(r.calls) as Array<Partial<InterruptCall> & Pick<InterruptCall, "call_id" | "name" | "args" | "args_hash">>).map(
    (c): InterruptCall => ({ policy: "approver", editable: false, args_schema: {}, audit_hash: c.audit_hash ?? keyedHash({ args_hash: c.args_hash }), ...c }),
  );
  return { ...r, calls };
}

/** An open interrupt with the owner of its thread, for the approvals inbox. */
export interface OpenInterrupt extends InterruptRecord {
  owner: string;
}

/** Interrupt records. Transitions out of `waiting_human` are compare-and-set: one decider wins. */
export class InterruptStore {
  private readonly q;

  /** `keyedHash`: the audit's keyed hash, for records written before calls carried one. */
  constructor(
    db: Db,
    private readonly keyedHash: (v: unknown) => string,
  ) {
    this.q = {
      insert: db.prepare(
        "INSERT INTO interrupts (interrupt_id, thread_id, run_id, calls, status, created_at, expires_at, requester) VALUES (?, ?, ?, ?, 'waiting_human', ?, ?, ?)",
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
      open: db.prepare<[number], Row & { owner: string }>(
        `SELECT i.*, t.owner FROM interrupts i JOIN threads t ON t.thread_id = i.thread_id
         WHERE i.status = 'waiting_human' AND i.expires_at > ? ORDER BY i.expires_at, i.interrupt_id`,
      ),
      nextDeadline: db.prepare<[], { t: number | null }>(
        "SELECT MIN(expires_at) AS t FROM interrupts WHERE status = 'waiting_human'",
      ),
    };
  }

  create(r: Omit<InterruptRecord, "status" | "decided_at">): void {
    this.q.insert.run(r.interrupt_id, r.thread_id, r.run_id, JSON.stringify(r.calls), r.created_at, r.expires_at, r.requester);
  }

  get(interruptId: string): InterruptRecord | undefined {
    const row = this.q.get.get(interruptId);
    return row ? fromRow(row, this.keyedHash) : undefined;
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
    return this.q.expired.all(now).map((r) => fromRow(r, this.keyedHash));
  }

  /** Interrupts still open for decisions at `now`, soonest deadline first. */
  listOpen(now: number): OpenInterrupt[] {
    return this.q.open.all(now).map((r) => ({ ...fromRow(r, this.keyedHash), owner: r.owner }));
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
    calls: r.calls.map(({ args_hash: _bound, audit_hash: _audited, ...shown }) => shown),
    expires_at: new Date(r.expires_at).toISOString(),
    resume_url: `/threads/${encodeURIComponent(r.thread_id)}/resume`,
  };
}
