import { isStorageFault } from "../../store/index.js";
import { recoverInterruptedRuns } from "./recovery.js";
import { RunCancelled } from "../run-abort.js";
import type { RunContext } from "../run-context.js";

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
/** Part of the lease after which, unrenewed, this replica stops its runs. */
const FENCE_AT = 0.8;

export class LeaseKeeper {
  private renewTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private warned = false;
  /** When the last successful renewal was sent, and since when renewals have come without a lapse. */
  private renewedAt: number | undefined;
  private heldSince: number | undefined;
  /** This lapse's runs have been stopped. */
  private fenced = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly leaseMs: number,
    // The system clock even when a test injects another (`RunContext.clock`): this measures how
    // late this process's own renewal timers run, in real time. The leases themselves are
    // compared on the database's clock (PostgreSQL), the one clock every replica shares.
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the lease and sweeps once (before serving), then keeps both going. */
  async start(): Promise<number> {
    await this.renewOrThrow();
    // SQLite: nothing of this process is alive yet, and no other process is: what is left is
    // closed before serving. Shared: this replica waits like any sweep (started as the database
    // comes back, it must not take over the lapsed threads of live replicas).
    const taken = this.ctx.store.replicas.shared ? 0 : await recoverInterruptedRuns(this.ctx, this.now());
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
    const sent = this.now();
    await this.ctx.store.replicas.heartbeat(sent, this.leaseMs);
    const done = this.now();
    // Lapsed if the last renewal sent is a lease or more behind this one's answer (a renewal that
    // hung counts from when it was sent: the lease before it may have run out meanwhile).
    if (this.renewedAt === undefined || done - this.renewedAt >= this.leaseMs) this.heldSince = done;
    this.renewedAt = sent;
    this.fenced = false;
  }

  private async renew(): Promise<void> {
    this.fenceIfLapsing();
    try {
      await this.renewOrThrow();
      this.warned = false;
    } catch (err) {
      this.report("could not renew this replica's lease", err);
    }
  }

  /**
   * A lease about to run out unrenewed (the database unreachable from here, maybe not from the
   * others): the runs of this process are stopped (reason `shutdown`) before a survivor may take
   * their threads over, so none of them goes on writing to a thread another replica now holds.
   */
  private fenceIfLapsing(): void {
    if (!this.ctx.store.replicas.shared || this.fenced || this.renewedAt === undefined) return;
    if (this.now() - this.renewedAt < this.leaseMs * FENCE_AT) return;
    this.fenced = true;
    const why = new RunCancelled("shutdown");
    for (const s of this.ctx.inFlight.starting.values()) s.controller.abort(why);
    for (const run of this.ctx.inFlight.active.values()) run.controller.abort(why);
    if (this.ctx.inFlight.active.size) this.ctx.log.warn("lease about to lapse: stopped this replica's runs", { runs: this.ctx.inFlight.active.size });
  }

  /** A database that is down is worth one line until it is back; anything else, its stack. */
  private report(msg: string, err: unknown): void {
    if (!isStorageFault(err)) return this.ctx.log.error(msg, { err });
    if (this.warned) return;
    this.warned = true;
    this.ctx.log.warn(`${msg}: database unavailable`, { message: err instanceof Error ? err.message : String(err) });
  }
}
