/**
 * Where "now" comes from, in ms since the epoch. Passed down from `createTollgate` (option
 * `clock`) into the stores and the runs, so deadlines (approval expiry) and timestamps can be
 * driven by a test without sleeping. It sits beside `logger.ts`, below every folder: the store,
 * the runs and the server all take it.
 */
export interface Clock {
  now(): number;
}

/** The system's clock: `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() };
