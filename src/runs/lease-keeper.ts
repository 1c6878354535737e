import { isStorageFault } from "../store/index.js";
import { recoverInterruptedRuns } from "./recovery.js";
import type { RunContext } from "./run-context.js";

/**
 * This replica's lease, and the sweep that takes over what dead replicas left. The lease is
 * renewed three times per `leaseMs`, so one late renewal does not orphan live runs; the sweep
 * runs twice per `leaseMs`, so a dead replica's runs are closed within twice `leaseMs` of its
 * last renewal (its lease runs out within one, the next sweep comes within half of one more).
 *
 * On a shared store, a replica sweeps only while its own lease has held for a whole `leaseMs`:
 * after an outage every replica's lease has run out at once, and the first to come back must not
 * take over the others' live runs before they have had the time to renew theirs.
 */
export class LeaseKeeper {
  private renewTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private warned = false;
  /** When the last renewal succeeded, and since when renewals have come without a lapse. */
  private renewedAt: number | undefined;
  private heldSince: number | undefined;

  constructor(
    private readonly ctx: RunContext,
    private readonly leaseMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the lease and sweeps once (before serving), then keeps both going. */
  async start(): Promise<number> {
    await this.renewOrThrow();
    // At start, nothing of this process is alive yet: what the sweep finds is another's.
    const taken = await recoverInterruptedRuns(this.ctx, this.now());
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, this.leaseMs / 3));
    this.sweepTimer = setInterval(() => void this.sweep(), Math.max(50, this.leaseMs / 2));
    this.renewTimer.unref();
    this.sweepTimer.unref();
    return taken;
  }

  /** Stops renewing and gives the lease up: what this process leaves, the others take at once. */
  async stop(): Promise<void> {
    clearInterval(this.renewTimer);
    clearInterval(this.sweepTimer);
    await this.sweeping;
    await this.ctx.store.replicas.retire().catch(() => undefined); // the lease runs out by itself
  }

  /** One sweep now (tests; the timer otherwise). */
  sweep(): Promise<unknown> {
    if (!this.mayTakeOver()) return Promise.resolve();
    this.sweeping ??= recoverInterruptedRuns(this.ctx, this.now())
      .catch((err: unknown) => this.report("lease sweep failed", err))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private mayTakeOver(): boolean {
    if (!this.ctx.store.replicas.shared) return true;
    const now = this.now();
    const held = this.renewedAt !== undefined && now - this.renewedAt < this.leaseMs;
    return held && this.heldSince !== undefined && now - this.heldSince >= this.leaseMs;
  }

  private async renewOrThrow(): Promise<void> {
    const at = this.now();
    await this.ctx.store.replicas.heartbeat(at, this.leaseMs);
    if (this.renewedAt === undefined || at - this.renewedAt >= this.leaseMs) this.heldSince = at; // it had lapsed
    this.renewedAt = at;
  }

  private async renew(): Promise<void> {
    try {
      await this.renewOrThrow();
      this.warned = false;
    } catch (err) {
      this.report("could not renew this replica's lease", err);
    }
  }

  /** A database that is down is worth one line until it is back; anything else, its stack. */
  private report(msg: string, err: unknown): void {
    if (!isStorageFault(err)) return this.ctx.log.error(msg, { err });
    if (this.warned) return;
    this.warned = true;
    this.ctx.log.warn(`${msg}: database unavailable`, { message: err instanceof Error ? err.message : String(err) });
  }
}
