import { refusals } from "../../protocol/index.js";

/**
 * Who may start a run now: at most `maxConcurrent` in flight in this process (`503 overloaded`),
 * and per principal a token bucket of `perMinute` runs and resumes (`429 rate_limited`), so one
 * client cannot fill the disk or starve the others. Asked only after authentication, validation,
 * 404 and 403, so refused requests do not use up anyone's budget.
 */
export class RunAdmission {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;
  private readonly perMinute: number;
  private readonly maxConcurrent: number;
  private readonly inFlight: () => number;
  private readonly now: () => number;

  constructor(o: {
    /** Runs and resumes per principal per minute; 0: no limit. */
    perMinute: number;
    maxConcurrent: number;
    /** How many runs are in flight in this process now. */
    inFlight: () => number;
    now?: () => number;
  }) {
    ({ perMinute: this.perMinute, maxConcurrent: this.maxConcurrent, inFlight: this.inFlight, now: this.now = Date.now } = o);
    this.perMs = this.perMinute / 60_000;
  }

  /** Takes one run from `sub`'s budget, or throws `overloaded` / `rate_limited` with a retry time. */
  admit(sub: string): void {
    if (this.inFlight() >= this.maxConcurrent) {
      throw refusals.overloaded(this.maxConcurrent);
    }
    if (this.perMinute <= 0) return;
    const now = this.now();
    const b = this.buckets.get(sub) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * this.perMs);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(sub, b);
      const wait = Math.ceil((1 - b.tokens) / this.perMs / 1000);
      throw refusals.rateLimited(this.perMinute, wait);
    }
    b.tokens -= 1;
    this.buckets.set(sub, b);
    // A bucket that has refilled carries no information: drop those so the map does not grow with every principal.
    if (this.buckets.size > 10_000) {
      for (const [k, v] of this.buckets) if (v.tokens + (now - v.at) * this.perMs >= this.perMinute) this.buckets.delete(k);
    }
  }
}
