/** How a dropped stream is retried. */
export interface ReconnectOptions {
  /** Reconnect attempts in a row that bring no new event before giving up. Default 5. */
  retries?: number;
  /** Wait before the first attempt; doubles on each further one. Default 100. */
  baseDelayMs?: number;
  /** Cap on the wait. Default 2000. */
  maxDelayMs?: number;
}

export type ReconnectPolicy = Required<ReconnectOptions>;

export const DEFAULT_RECONNECT: ReconnectPolicy = { retries: 5, baseDelayMs: 100, maxDelayMs: 2000 };

export function reconnectPolicy(options: ReconnectOptions | undefined): ReconnectPolicy {
  return { ...DEFAULT_RECONNECT, ...stripUndefined(options ?? {}) };
}

/** Wait before reconnect attempt `attempt` (0-based): base·2^attempt, capped at max. */
export function backoffDelay(attempt: number, policy: ReconnectPolicy): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
