import { AsyncLocalStorage } from "node:async_hooks";

/**
 * One SQLite connection serves the whole process, and a transaction on it spans awaits (the
 * store API is async, for PostgreSQL's sake). While one is open, a statement from anywhere else
 * would silently join it, and be rolled back with it. So the connection has one holder at a
 * time: a transaction, or a checkpointer call (LangGraph's saver awaits between its statements).
 * Statements run at once when nobody holds it, or when the caller is inside the holder's own
 * async context; otherwise they wait for the holder to finish.
 */
export class ConnectionLock {
  #owner: object | undefined;
  #waiters: Array<() => void> = [];
  readonly #context = new AsyncLocalStorage<object>();

  /** Runs `work` (synchronous statements) now if it may, else as soon as the holder lets go. */
  gate<T>(work: () => T): Promise<T> {
    if (this.#mayRun()) {
      try {
        return Promise.resolve(work());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.#released().then(() => this.gate(work));
  }

  /** Holds the connection for `fn` and everything it awaits. Re-entrant within `fn`. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#owner && this.#context.getStore() === this.#owner) return fn();
    while (this.#owner) await this.#released();
    const token = {};
    this.#owner = token;
    try {
      return await this.#context.run(token, fn);
    } finally {
      this.#owner = undefined;
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w();
    }
  }

  /** Whether the caller is inside the current holder's work (a transaction, say). */
  get inHolder(): boolean {
    return this.#owner !== undefined && this.#context.getStore() === this.#owner;
  }

  #mayRun(): boolean {
    return this.#owner === undefined || this.#context.getStore() === this.#owner;
  }

  #released(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
