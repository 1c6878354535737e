import { isStorageFault } from "../../store/index.js";
import { escalateDue } from "./escalator.js";
import { closeInterrupt } from "./interrupt-closer.js";
import type { RunContext } from "../run-context.js";

/**
 * Closes interrupts past their deadline: once at start (those that expired while the server was
 * down), then every `intervalMs`. A resume after the deadline gets 410 even before this runs.
 * The same sweep escalates the interrupts whose escalation time has come (see `escalateDue`).
 */
export class ExpiryCloser {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(
    private readonly ctx: RunContext,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** Closes every interrupt that is past due now; returns how many it closed. */
  sweep(): Promise<number> {
    this.sweeping ??= this.closeDue().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Due interrupts; none while the database cannot be read (the next sweep tries again). */
  private async listExpired() {
    try {
      return await this.ctx.store.interrupts.listExpired(this.ctx.clock.now());
    } catch (err) {
      if (!isStorageFault(err)) throw err;
      return [];
    }
  }

  private async closeDue(): Promise<number> {
    await escalateDue(this.ctx);
    let closed = 0;
    for (const r of await this.listExpired()) {
      try {
        if (await closeInterrupt(this.ctx, { threadId: r.thread_id, interruptId: r.interrupt_id, to: "expired" })) closed++;
      } catch (err) {
        // A refused write is finished by the settler; anything else is a bug worth its stack.
        if (isStorageFault(err)) this.ctx.log.warn("expiry close deferred: database unavailable", { thread_id: r.thread_id, interrupt_id: r.interrupt_id });
        else this.ctx.log.error("expiry close failed", { thread_id: r.thread_id, interrupt_id: r.interrupt_id, err });
      }
    }
    return closed;
  }
}
