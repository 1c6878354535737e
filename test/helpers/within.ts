/**
 * Awaiting with a deadline, for waits that hang when the code under test is broken (an abort that
 * never comes, a stream that never ends). Without one such a test fails only as vitest's "Test
 * timed out", which says nothing of what did not happen.
 */

export interface Deadline {
  /** How long to wait; keep it well below the test's timeout, or vitest's message wins the race. */
  ms: number;
  /** What did not happen, said as a failure: "the model's HTTP request was not aborted". */
  failure: string;
  /** What the wait is measured from, if anything: "the cancel" reads "… within 5 s of the cancel". */
  since?: string;
}

/** Thrown when the deadline passes first; the message says what did not happen and how long was waited. */
export class DeadlineError extends Error {
  override readonly name = "DeadlineError";
}

/**
 * `promise`'s outcome, or a `DeadlineError` once `d.ms` has passed without one:
 * "<failure> within <s> s[ of <since>]". The timer never keeps the process alive.
 */
export async function within<T>(promise: PromiseLike<T>, d: Deadline): Promise<T> {
  // Made now, not when the timer fires: its stack then leads to the test line that waited.
  const error = new DeadlineError(`${d.failure} within ${d.ms / 1000} s${d.since ? ` of ${d.since}` : ""}`);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error), d.ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
