/**
 * Microseconds on the machine's monotonic clock. `process.hrtime` reads CLOCK_MONOTONIC, which
 * every process on the machine shares, so a stamp taken in the model server can be compared
 * with one taken in the bench client.
 */
export function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Milliseconds between two `nowUs()` stamps. */
export const msBetween = (fromUs: number, toUs: number): number => (toUs - fromUs) / 1000;
