import type { Logger } from "../logger.js";
import { WEBHOOK_LANE, type WebhookDelivery, type WebhookOutboxStore } from "../store/index.js";
import { webhookBackoffMs } from "./webhook-backoff.js";
import { signWebhook } from "./webhook-signature.js";

/** What became of one attempt, for metrics: sent, to be retried, or given up. */
export type WebhookOutcome = "delivered" | "retry" | "failed";

/** What one attempt came to: delivered (with what the receiver answered that later ones need), or why not. */
export type AttemptResult = { receipt?: string } | { error: string; /** The receiver's own wait (Slack's `Retry-After`), ms. */ retryAfterMs?: number };

/**
 * Sends one delivery of a lane. `signal` aborts at the attempt's deadline or at stop; `receipt()`
 * reads what the lane's latest delivered delivery about the same `ref` answered (Slack's `ts`).
 */
export type DeliverySender = (d: WebhookDelivery, o: { signal: AbortSignal; receipt: () => Promise<string | undefined> }) => Promise<AttemptResult>;

export interface WebhookDispatcherOptions {
  outbox: WebhookOutboxStore;
  /** The approval webhook's receiver; a channel's lane gives `send` instead. */
  url?: string;
  secret?: string;
  /** The outbox lane this dispatcher drains (default `webhook`). */
  lane?: string;
  /** How a channel sends (default: the signed webhook POST to `url`). */
  send?: DeliverySender;
  maxAttempts: number;
  /** One attempt's deadline: a receiver that stalls longer counts as a failed attempt. */
  timeoutMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** How often to look for due deliveries besides the wake-up after each enqueue. */
  sweepMs: number;
  log: Logger;
  /** The clock claims, leases and retry times are read on. */
  now?: () => number;
  /** Called once per finished attempt (counters for metrics). */
  onOutcome?: (outcome: WebhookOutcome, delivery: WebhookDelivery) => void;
  /** Deliveries in flight at once (each from a different thread). */
  concurrency?: number;
  /** Finished (delivered or failed) deliveries older than this are deleted; undefined: kept for ever. */
  retentionMs?: number;
  /** How often to prune: at start, then this often (default the retention, at most an hour). */
  pruneEveryMs?: number;
  /** Rows deleted per statement (default 500): the database is free again between batches. */
  pruneBatch?: number;
}

/**
 * Sends the outbox's approval webhooks: claims the due head of each thread's queue, POSTs its
 * stored body signed with the secret, and records the outcome: delivered on a 2xx; otherwise
 * retried with backoff until `maxAttempts`, then marked failed (logged) so the thread's next one
 * goes. Nothing here is on a run's path: runs only insert rows; this wakes after their commit
 * (and every `sweepMs`, which also picks up what a previous process left) and works on its own.
 */
export class WebhookDispatcher {
  private readonly now: () => number;
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private pruning: Promise<number> | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly o: WebhookDispatcherOptions) {
    this.now = o.now ?? Date.now;
  }

  /** A claim outlives its attempt's deadline, so no one else claims it while it may still land. */
  private get leaseMs(): number {
    return this.o.timeoutMs * 2 + 1_000;
  }

  start(): void {
    this.stopped = false;
    // Told by the transaction that enqueued, as it returns: the claim waits for the next turn of
    // the loop, so it is never part of the run or decision that committed.
    this.unsubscribe = this.o.outbox.onEnqueued(() => setImmediate(() => this.nudge()));
    this.nudge();
    if (this.o.retentionMs !== undefined) this.schedulePrune(0);
  }

  /** Stops claiming and aborts attempts in flight; their leases run out and a later start retries them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    clearTimeout(this.pruneTimer);
    for (const { controller } of this.inFlight.values()) controller.abort();
    await this.passing;
    await this.pruning;
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
  }

  /** Looks for due deliveries now (after an enqueue commits, or an attempt ends). */
  nudge(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass().finally(() => {
      this.passing = undefined;
      if (this.again) {
        this.again = false;
        this.nudge();
      }
    });
  }

  private async pass(): Promise<void> {
    clearTimeout(this.timer);
    let wakeIn = this.o.sweepMs;
    try {
      const concurrency = this.o.concurrency ?? 8;
      const room = concurrency - this.inFlight.size;
      if (room > 0) {
        const claimed = await this.o.outbox.claimDue(this.now(), this.leaseMs, { limit: room, lane: this.o.lane ?? WEBHOOK_LANE });
        // Stopped meanwhile: the claims' leases run out and the next start sends them. A delivery
        // still in flight here (its lease ran out under a slow database) is not sent twice at once.
        if (!this.stopped) for (const d of claimed) if (!this.inFlight.has(d.id)) this.launch(d);
      }
      // Every slot busy: the attempt that ends first wakes us (launch's finally). Asking for the
      // next due row now would find one already due and spin until then.
      if (this.inFlight.size < concurrency) {
        const due = await this.o.outbox.nextDueAt(this.o.lane);
        if (due !== undefined) wakeIn = Math.min(wakeIn, Math.max(0, due - this.now()));
      }
    } catch (err) {
      // The database is away: the sweep tries again; nothing is lost, the rows stay pending.
      this.o.log.warn("webhook outbox unreadable; retrying on the next sweep", { message: err instanceof Error ? err.message : String(err) });
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => this.nudge(), wakeIn);
    this.timer.unref();
  }

  private schedulePrune(inMs: number): void {
    const every = this.o.pruneEveryMs ?? Math.min(this.o.retentionMs!, 3_600_000);
    this.pruneTimer = setTimeout(() => {
      this.pruning = this.prune().finally(() => {
        this.pruning = undefined;
        if (!this.stopped) this.schedulePrune(every);
      });
    }, inMs);
    this.pruneTimer.unref();
  }

  /**
   * Deletes finished deliveries past the retention, so the outbox holds what is pending plus a
   * window to look back on, not every notice ever sent. Returns how many went.
   */
  private async prune(): Promise<number> {
    const before = this.now() - this.o.retentionMs!;
    const batch = Math.max(1, this.o.pruneBatch ?? 500);
    let total = 0;
    try {
      for (;;) {
        const n = await this.o.outbox.prune(before, batch);
        total += n;
        if (n < batch) break;
        // SQLite's statements are synchronous: let requests and timers in between batches.
        await new Promise((resolve) => setImmediate(resolve));
        if (this.stopped) break;
      }
    } catch (err) {
      // The database is away: the next prune deletes what this one could not.
      this.o.log.warn("webhook outbox could not be pruned; trying again later", { message: err instanceof Error ? err.message : String(err) });
    }
    if (total > 0) this.o.log.info("pruned finished webhook deliveries", { deleted: total, finished_before: new Date(before).toISOString() });
    return total;
  }

  private launch(d: WebhookDelivery): void {
    const controller = new AbortController();
    const done = this.attempt(d, controller)
      .catch((err: unknown) =>
        this.o.log.error("webhook attempt could not be recorded", { thread_id: d.thread_id, delivery_id: d.id, err }),
      )
      .finally(() => {
        this.inFlight.delete(d.id);
        this.nudge(); // the thread's next delivery may go now
      });
    this.inFlight.set(d.id, { controller, done });
  }

  private async attempt(d: WebhookDelivery, controller: AbortController): Promise<void> {
    const result = await this.send(d, controller);
    if (this.stopped) return; // aborted by stop(): the lease runs out and the next start retries it
    const { outbox, log } = this.o;
    if (!("error" in result)) {
      if (await outbox.settle(d.id, d.attempts, { delivered: true, ...result })) this.o.onOutcome?.("delivered", d);
      return;
    }
    const { error } = result;
    if (d.attempts >= this.o.maxAttempts) {
      if (await outbox.settle(d.id, d.attempts, { error, retryAt: "failed" })) {
        log.warn("webhook delivery failed; giving up, the thread's next one goes", {
          thread_id: d.thread_id,
          delivery_id: d.id,
          attempts: d.attempts,
          error,
        });
        this.o.onOutcome?.("failed", d);
      }
      return;
    }
    // The receiver's own wait wins when it asks for longer than our backoff (Slack's Retry-After).
    const backoff = webhookBackoffMs(d.attempts, { baseMs: this.o.backoffBaseMs, capMs: this.o.backoffCapMs });
    const retryAt = this.now() + Math.max(backoff, result.retryAfterMs ?? 0);
    if (await outbox.settle(d.id, d.attempts, { error, retryAt })) {
      log.info("webhook attempt failed; will retry", { thread_id: d.thread_id, delivery_id: d.id, attempts: d.attempts, error });
      this.o.onOutcome?.("retry", d);
    }
  }

  /** One attempt under the deadline: the lane's sender, or the signed webhook POST. */
  private async send(d: WebhookDelivery, controller: AbortController): Promise<AttemptResult> {
    if (!this.o.send) {
      const error = await this.post(d, controller);
      return error === undefined ? {} : { error };
    }
    const timer = setTimeout(() => controller.abort(), this.o.timeoutMs);
    try {
      const receipt = async () => (d.ref ? this.o.outbox.receipt(d.lane, d.ref) : undefined);
      return await this.o.send(d, { signal: controller.signal, receipt });
    } catch (err) {
      if (controller.signal.aborted) return { error: `no answer within ${this.o.timeoutMs} ms` };
      return { error: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** One POST of the stored body; undefined on a 2xx, else why not (no URL: it may hold credentials). */
  private async post(d: WebhookDelivery, controller: AbortController): Promise<string | undefined> {
    const timer = setTimeout(() => controller.abort(), this.o.timeoutMs);
    try {
      const res = await fetch(this.o.url!, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-tollgate-signature": signWebhook(d.body, this.o.secret!),
          "x-tollgate-delivery": d.id,
        },
        body: d.body,
        // A redirect is not a delivery: following it could send the body somewhere else.
        redirect: "manual",
        signal: controller.signal,
      });
      // Read the answer under the same deadline, so the connection can be reused or is closed.
      await res.arrayBuffer();
      return res.status >= 200 && res.status < 300 ? undefined : `HTTP ${res.status}`;
    } catch (err) {
      if (controller.signal.aborted) return `no answer within ${this.o.timeoutMs} ms`;
      const cause = (err as { cause?: { code?: string } }).cause;
      return `request failed${cause?.code ? `: ${cause.code}` : ""}`;
    } finally {
      clearTimeout(timer);
    }
  }
}
