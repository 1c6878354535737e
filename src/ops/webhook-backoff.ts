/** How webhook retries back off. */
export interface WebhookBackoff {
  /** The first retry's ceiling; each later one doubles it. */
  baseMs: number;
  /** No retry waits longer. */
  capMs: number;
  /** A number in [0, 1): the jitter (Math.random when not given). */
  random?: () => number;
}

/**
 * The delay before retry number `attempt` (1 = after the first failure): exponential from `baseMs`,
 * capped at `capMs`, with "equal jitter" (half fixed, half random) so receivers coming back are not
 * hit by every replica's retries at the same instant.
 */
export function webhookBackoffMs(attempt: number, o: WebhookBackoff): number {
  const { baseMs, capMs, random = Math.random } = o;
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
