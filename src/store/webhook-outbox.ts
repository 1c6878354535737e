import type { WebhookDelivery } from "./types.js";

/** The approval webhook's lane; channels have their own (`slack`, `email`). */
export const WEBHOOK_LANE = "webhook";

/**
 * Tells the dispatcher that deliveries were enqueued, once they are committed (a dispatcher woken
 * before the commit would find nothing on another connection). Shared by every outbox store of
 * one opened store, transactions' included.
 */
export class EnqueueSignal {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  fire(): void {
    for (const l of this.listeners) l();
  }
}

/** A row as both databases return it (PostgreSQL's BIGINT columns come back as numbers via the pool's parser). */
export function deliveryFromRow(r: WebhookDelivery): WebhookDelivery {
  return {
    id: r.id,
    thread_id: r.thread_id,
    seq: Number(r.seq),
    body: r.body,
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    status: r.status,
    last_error: r.last_error,
    created_at: Number(r.created_at),
    lane: r.lane ?? WEBHOOK_LANE,
    ref: r.ref ?? null,
    receipt: r.receipt ?? null,
  };
}

/** What one outcome writes: status, next attempt time, last error. */
export function settledColumns(
  outcome: { delivered: true; receipt?: string } | { error: string; retryAt: number | "failed" },
): { status: WebhookDelivery["status"]; nextAt: number | null; error: string | null; receipt: string | null } {
  if ("delivered" in outcome) return { status: "delivered", nextAt: null, error: null, receipt: outcome.receipt ?? null };
  if (outcome.retryAt === "failed") return { status: "failed", nextAt: null, error: outcome.error, receipt: null };
  return { status: "pending", nextAt: outcome.retryAt, error: outcome.error, receipt: null };
}
