/**
 * What the run service lets a start (a message or a resume) through by: not once it is shutting
 * down, then the run-rate and concurrency limits. The service holds both; a start asks at the
 * points the contract orders.
 */
export interface StartDoor {
  /** Throws `shutting_down` once the service has begun to shut down. */
  refuseIfClosing(): void;
  /** Takes one run from `sub`'s budget, or throws `overloaded` / `rate_limited` (see `RunAdmission`). */
  admit(sub: string): void;
}
