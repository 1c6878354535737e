/** What one model request is asked to do, carried in the last user message as `bench:{json}`. */
export interface Directive {
  /** Content tokens to stream (text mode), or before holding the response open (hang mode). Default 16. */
  tokens?: number;
  /** Milliseconds between tokens; 0 = as fast as the socket takes them. */
  delay?: number;
  /**
   * Milliseconds to wait after the first token before the rest. A real model's second token lags
   * its first; without the gap a burst of N tokens would be read as one, and time to first token
   * would measure the whole burst.
   */
  firstGap?: number;
  /** `text`: stream and finish. `hang`: stream `tokens`, then hold the response open. `refund`: call refund_order. */
  mode?: "text" | "hang" | "refund";
  /** Names the request for `GET /_bench/closed/<id>`. */
  id?: string;
}

export const directive = (d: Directive): string => `bench:${JSON.stringify(d)}`;

export function parseDirective(text: string): Directive {
  const at = text.indexOf("bench:");
  if (at < 0) return {};
  try {
    return JSON.parse(text.slice(at + 6)) as Directive;
  } catch {
    return {};
  }
}
