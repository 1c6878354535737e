import { randomUUID } from "node:crypto";
import { deliveryFromRow, type EnqueueSignal, settledColumns, WEBHOOK_LANE } from "../webhook-outbox.js";
import type { LaneClaim, OutboxLane, WebhookDelivery, WebhookOutboxStore } from "../types.js";
import type { SqliteConn } from "./sqlite-conn.js";

/**
 * The webhook outbox in SQLite. One process owns the file, and every statement runs under the
 * connection lock, so a claim needs no row locks: claiming and leasing are one UPDATE.
 */
export class SqliteWebhookOutboxStore implements WebhookOutboxStore {
  private readonly q;

  /** `enqueued`: called at each enqueue; the store's transaction tells the signal after commit. */
  constructor(
    private readonly conn: SqliteConn,
    private readonly signal: EnqueueSignal,
    private readonly enqueued: () => void,
  ) {
    const { db } = conn;
    this.q = {
      // The thread's next seq in the same statement: transactions on one connection never interleave.
      insert: db.prepare(
        `INSERT INTO webhook_outbox (id, thread_id, seq, body, attempts, next_attempt_at, status, created_at, lane, ref)
         VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_outbox WHERE thread_id = ?), ?, 0, ?, 'pending', ?, ?, ?)`,
      ),
      // The head of each thread's queue in the lane, when it is due.
      due: db.prepare<[string, number, number], WebhookDelivery>(
        `SELECT o.* FROM webhook_outbox o
         JOIN (SELECT thread_id, MIN(seq) AS seq FROM webhook_outbox WHERE status = 'pending' AND lane = ? GROUP BY thread_id) h
           ON h.thread_id = o.thread_id AND h.seq = o.seq
         WHERE o.next_attempt_at <= ? ORDER BY o.next_attempt_at, o.created_at LIMIT ?`,
      ),
      lease: db.prepare("UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ?"),
      nextDue: db.prepare<[string], { at: number | null }>(
        `SELECT MIN(o.next_attempt_at) AS at FROM webhook_outbox o
         JOIN (SELECT thread_id, MIN(seq) AS seq FROM webhook_outbox WHERE status = 'pending' AND lane = ? GROUP BY thread_id) h
           ON h.thread_id = o.thread_id AND h.seq = o.seq`,
      ),
      settle: db.prepare(
        `UPDATE webhook_outbox SET status = ?, next_attempt_at = COALESCE(?, next_attempt_at), last_error = COALESCE(?, last_error), receipt = COALESCE(?, receipt)
         WHERE id = ? AND attempts = ? AND status = 'pending'`,
      ),
      receipt: db.prepare<[string, string], { receipt: string }>(
        "SELECT receipt FROM webhook_outbox WHERE lane = ? AND ref = ? AND receipt IS NOT NULL ORDER BY seq DESC LIMIT 1",
      ),
      get: db.prepare<[string], WebhookDelivery>("SELECT * FROM webhook_outbox WHERE id = ?"),
      list: db.prepare<[string], WebhookDelivery>("SELECT * FROM webhook_outbox WHERE thread_id = ? ORDER BY seq"),
      // Batched: one statement holds the connection lock, and every run waits on it.
      prune: db.prepare<[number, number]>(
        `DELETE FROM webhook_outbox WHERE id IN (
           SELECT id FROM webhook_outbox WHERE status IN ('delivered', 'failed') AND next_attempt_at < ? LIMIT ?)`,
      ),
    };
  }

  async enqueue(threadId: string, body: string, at: number | OutboxLane): Promise<string> {
    const to = typeof at === "number" ? { at, lane: WEBHOOK_LANE, ref: undefined } : at;
    const now = to.at;
    const id = randomUUID();
    await this.conn.lock.gate(() => this.q.insert.run(id, threadId, threadId, body, now, now, to.lane, to.ref ?? null));
    this.enqueued();
    return id;
  }

  claimDue(now: number, leaseMs: number, claim: number | LaneClaim): Promise<WebhookDelivery[]> {
    const { limit, lane } = typeof claim === "number" ? { limit: claim, lane: WEBHOOK_LANE } : claim;
    return this.conn.lock.gate(() =>
      this.conn.db.transaction(() =>
        this.q.due.all(lane, now, limit).map((r) => {
          this.q.lease.run(now + leaseMs, r.id);
          return deliveryFromRow({ ...r, attempts: r.attempts + 1, next_attempt_at: now + leaseMs });
        }),
      )(),
    );
  }

  nextDueAt(lane = WEBHOOK_LANE): Promise<number | undefined> {
    return this.conn.lock.gate(() => this.q.nextDue.get(lane)?.at ?? undefined);
  }

  receipt(lane: string, ref: string): Promise<string | undefined> {
    return this.conn.lock.gate(() => this.q.receipt.get(lane, ref)?.receipt);
  }

  settle(id: string, attempt: number, outcome: Parameters<WebhookOutboxStore["settle"]>[2]): Promise<boolean> {
    const c = settledColumns(outcome);
    return this.conn.lock.gate(() => this.q.settle.run(c.status, c.nextAt, c.error, c.receipt, id, attempt).changes === 1);
  }

  get(id: string): Promise<WebhookDelivery | undefined> {
    return this.conn.lock.gate(() => {
      const r = this.q.get.get(id);
      return r ? deliveryFromRow(r) : undefined;
    });
  }

  list(threadId: string): Promise<WebhookDelivery[]> {
    return this.conn.lock.gate(() => this.q.list.all(threadId).map(deliveryFromRow));
  }

  prune(before: number, limit: number): Promise<number> {
    return this.conn.lock.gate(() => this.q.prune.run(before, limit).changes);
  }

  onEnqueued(listener: () => void): () => void {
    return this.signal.subscribe(listener);
  }
}
