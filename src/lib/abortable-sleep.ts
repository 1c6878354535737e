/**
 * Resolves after `ms`; rejects with the signal's reason as soon as it aborts (at once if it
 * already has), clearing the timer so nothing lingers. A wait of 0 or less resolves without a
 * timer: a demo model with no token delay must not pay a turn of the event loop per token.
 * Browser-safe (the client uses it): no Node imports here.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
