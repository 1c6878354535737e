import { escapeRegExp } from "../lib/index.js";

/**
 * Scrubs configured secrets from a run's streamed text, one token at a time. A secret can arrive
 * split across tokens ("sk-te" + "st-ABC…"), so the end of what has come that could still become
 * one is held back until the next token shows whether it does; `flush` lets it go (the message
 * ended, or another event comes). Text that cannot begin a secret passes at once, so a token is
 * delayed only when its tail looks like the start of one.
 */
export interface TokenFilter {
  /** What of `text` (and what was held) may be shown now; may be "". */
  push(text: string): string;
  /** What is still held, scrubbed: to be shown before anything else of the run. */
  flush(): string;
}

export const PASS_TOKENS: TokenFilter = { push: (text) => text, flush: () => "" };

/** A filter for one stream; `secrets` longest first, none shorter than the scrubber's minimum. */
export function createTokenFilter(secrets: readonly string[], mask: string): TokenFilter {
  if (secrets.length === 0) return PASS_TOKENS;
  const whole = new RegExp(secrets.map(escapeRegExp).join("|"), "g");
  const firstChars = new Set(secrets.map((s) => s[0]!));
  const longest = Math.max(...secrets.map((s) => s.length));
  /** Length of the longest end of `text` that is a proper start of some secret. */
  const pendingLength = (text: string): number => {
    for (let i = Math.max(0, text.length - longest + 1); i < text.length; i++) {
      if (!firstChars.has(text[i]!)) continue;
      const tail = text.slice(i);
      if (secrets.some((s) => s.length > tail.length && s.startsWith(tail))) return tail.length;
    }
    return 0;
  };
  let held = "";
  return {
    push(text) {
      const scrubbed = (held + text).replace(whole, mask);
      const keep = pendingLength(scrubbed);
      held = scrubbed.slice(scrubbed.length - keep);
      return scrubbed.slice(0, scrubbed.length - keep);
    },
    flush() {
      const out = held;
      held = "";
      return out;
    },
  };
}
