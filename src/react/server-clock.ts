/**
 * The server's time as this browser can best tell it, from the `Date` header of its responses. A
 * countdown to `expires_at` must count on the server's clock: the server decides expiry, and a
 * laptop's clock may be minutes off.
 *
 * `Date` has one-second resolution and was written somewhere between sending the request and
 * receiving the answer, so each response bounds the offset (server minus local) to an interval;
 * the intersection narrows with every response, and its middle is the estimate.
 */
export class ServerClock {
  #low = -Infinity;
  #high = Infinity;
  readonly #localNow: () => number;

  constructor(localNow: () => number = Date.now) {
    this.#localNow = localNow;
  }

  /** Takes one response's `Date` header; `sentAt`/`receivedAt` are local times around the request. */
  observe(dateHeader: string | null, sentAt: number, receivedAt: number): void {
    const server = dateHeader ? Date.parse(dateHeader) : NaN;
    if (!Number.isFinite(server)) return;
    const low = server - receivedAt;
    const high = server + 1000 - sentAt;
    if (low > this.#high || high < this.#low) {
      // Disjoint with what we knew: one of the clocks was set since. Trust the newest answer.
      this.#low = low;
      this.#high = high;
      return;
    }
    this.#low = Math.max(this.#low, low);
    this.#high = Math.min(this.#high, high);
  }

  /** Server minus local time in ms; 0 until a response with a `Date` header was seen. */
  offset(): number {
    return Number.isFinite(this.#low) && Number.isFinite(this.#high) ? Math.round((this.#low + this.#high) / 2) : 0;
  }

  /**
   * The latest time the server's clock may read now (the offset's upper bound): what a countdown
   * should use, so that it never shows more time than is left. `now()` until a `Date` was seen.
   */
  latest(): number {
    return Number.isFinite(this.#high) ? this.#localNow() + this.#high : this.now();
  }

  /** The server's current time in ms since the epoch. */
  now(): number {
    return this.#localNow() + this.offset();
  }

  /** A `fetch` that feeds this clock from every response it receives. */
  wrapFetch(inner: typeof fetch): typeof fetch {
    return async (input, init) => {
      const sentAt = this.#localNow();
      const response = await inner.call(globalThis, input, init);
      this.observe(response.headers.get("date"), sentAt, this.#localNow());
      return response;
    };
  }
}
