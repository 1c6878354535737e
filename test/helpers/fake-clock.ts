import type { Clock } from "../../src/clock.js";

/** A clock that moves only when a test says so: deadlines pass without sleeping. */
export class FakeClock implements Clock {
  /** Starts at the real time, so stamped rows and ISO dates look like any other. */
  constructor(private t: number = Date.now()) {}

  now(): number {
    return this.t;
  }

  advance(ms: number): void {
    this.t += ms;
  }
}
