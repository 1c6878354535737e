import { randomUUID } from "node:crypto";
import { deliveryFromRow, type EnqueueSignal, settledColumns, WEBHOOK_LANE } from "../webhook-outbox.js";
import type { LaneClaim, OutboxLane, WebhookDelivery, WebhookOutboxStore } from "../types.js";
import { changedOne, inTransaction, type Queryable } from "./queryable.js";

/**
 * The webhook outbox in PostgreSQL, shared by every replica. A claim locks the heads it takes
 * (`FOR UPDATE SKIP LOCKED`: replicas claiming together take different rows) and pushes their
 * `next_attempt_at` past a lease, so no other replica claims them meanwhile, and one that dies
 * mid-delivery has its claim taken up by another when the lease runs out.
 */
export class PgWebhookOutboxStore implements WebhookOutboxStore {
  /** `enqueued`: called at each enqueue; the store's transaction tells the signal after commit. */
  constructor(
    private readonly q: Queryable,
    private readonly signal: EnqueueSignal,
    private readonly enqueued: () => void,
  ) {}

  async enqueue(threadId: string, body: string, at: number | OutboxLane): Promise<string> {
    const to = typeof at === "number" ? { at, lane: WEBHOOK_LANE, ref: undefined } : at;
    const now = to.at;
    const id = randomUUID();
    // The thread's next seq: the state changes that enqueue all update the thread's row first, so
    // its lock orders them; UNIQUE (thread_id, seq) refuses anything that slipped past.
    await this.q.query(
      `INSERT INTO webhook_outbox (id, thread_id, seq, body, attempts, next_attempt_at, status, created_at, lane, ref)
       VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_outbox WHERE thread_id = $2), $3, 0, $4, 'pending', $4, $5, $6)`,
      [id, threadId, body, now, to.lane, to.ref ?? null],
    );
    this.enqueued();
    return id;
  }

  claimDue(now: number, leaseMs: number, claim: number | LaneClaim): Promise<WebhookDelivery[]> {
    const { limit, lane } = typeof claim === "number" ? { limit: claim, lane: WEBHOOK_LANE } : claim;
    return inTransaction(this.q, async (tx) => {
      // Heads first (the lowest pending seq per thread), then lock the due ones among them. A head
      // another replica holds is skipped, and the row behind it is not a head: order holds.
      const { rows } = await tx.query<WebhookDelivery>(
        `WITH heads AS (
           SELECT DISTINCT ON (thread_id) id FROM webhook_outbox WHERE status = 'pending' AND lane = $3 ORDER BY thread_id, seq
         )
         SELECT o.* FROM webhook_outbox o JOIN heads h ON h.id = o.id
         WHERE o.status = 'pending' AND o.next_attempt_at <= $1
         ORDER BY o.next_attempt_at, o.created_at LIMIT $2
         FOR UPDATE OF o SKIP LOCKED`,
        [now, limit, lane],
      );
      if (!rows.length) return [];
      await tx.query("UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = $1 WHERE id = ANY($2::text[])", [
        now + leaseMs,
        rows.map((r) => r.id),
      ]);
      return rows.map((r) => deliveryFromRow({ ...r, attempts: Number(r.attempts) + 1, next_attempt_at: now + leaseMs }));
    });
  }

  async nextDueAt(lane = WEBHOOK_LANE): Promise<number | undefined> {
    const { rows } = await this.q.query<{ at: string | null }>(
      `SELECT MIN(next_attempt_at) AS at FROM (
         SELECT DISTINCT ON (thread_id) next_attempt_at FROM webhook_outbox WHERE status = 'pending' AND lane = $1 ORDER BY thread_id, seq
       ) heads`,
      [lane],
    );
    const at = rows[0]?.at;
    return at === null || at === undefined ? undefined : Number(at);
  }

  async settle(id: string, attempt: number, outcome: Parameters<WebhookOutboxStore["settle"]>[2]): Promise<boolean> {
    const c = settledColumns(outcome);
    const r = await this.q.query(
      `UPDATE webhook_outbox SET status = $1, next_attempt_at = COALESCE($2::bigint, next_attempt_at), last_error = COALESCE($3, last_error),
         receipt = COALESCE($6, receipt)
       WHERE id = $4 AND attempts = $5 AND status = 'pending'`,
      [c.status, c.nextAt, c.error, id, attempt, c.receipt],
    );
    return changedOne(r);
  }

  async receipt(lane: string, ref: string): Promise<string | undefined> {
    const { rows } = await this.q.query<{ receipt: string }>(
      "SELECT receipt FROM webhook_outbox WHERE lane = $1 AND ref = $2 AND receipt IS NOT NULL ORDER BY seq DESC LIMIT 1",
      [lane, ref],
    );
    return rows[0]?.receipt;
  }

  async get(id: string): Promise<WebhookDelivery | undefined> {
    const { rows } = await this.q.query<WebhookDelivery>("SELECT * FROM webhook_outbox WHERE id = $1", [id]);
    return rows[0] ? deliveryFromRow(rows[0]) : undefined;
  }

  async list(threadId: string): Promise<WebhookDelivery[]> {
    const { rows } = await this.q.query<WebhookDelivery>("SELECT * FROM webhook_outbox WHERE thread_id = $1 ORDER BY seq", [threadId]);
    return rows.map(deliveryFromRow);
  }

  async prune(before: number, limit: number): Promise<number> {
    // Replicas pruning at once take different rows (SKIP LOCKED), rather than waiting on each
    // other's and each ending early on a short count.
    const r = await this.q.query(
      `DELETE FROM webhook_outbox WHERE id IN (
         SELECT id FROM webhook_outbox WHERE status IN ('delivered', 'failed') AND next_attempt_at < $1
         LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [before, limit],
    );
    return r.rowCount ?? 0;
  }

  onEnqueued(listener: () => void): () => void {
    return this.signal.subscribe(listener);
  }
}
