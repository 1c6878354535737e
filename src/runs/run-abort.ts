import type { CancelReason } from "../protocol/index.js";

/** The abort reason of a run: who stopped it. */
export class RunCancelled extends Error {
  /** When the cancel reached this process (`performance.now()`), for the cancel-latency metric. */
  readonly at = performance.now();

  constructor(readonly reason: CancelReason) {
    super(`run cancelled (${reason})`);
    this.name = "AbortError";
  }
}

export function cancelReasonOf(signal: AbortSignal): CancelReason {
  return signal.reason instanceof RunCancelled ? signal.reason.reason : "api";
}
