import type { SecretMatcher } from "./secret-matcher.js";

/**
 * Scrubs configured secrets from a run's streamed text, one token at a time. A secret can arrive
 * split across tokens ("sk-te" + "st-ABC…"), so the end of what has come that could still become
 * part of a run of one is held back until the next token shows whether it does (at most the run's
 * length less one character, with the whitespace between them); `flush` lets it go (the message
 * ended, or another event comes). The shown text is kept as context too: a run that began in it
 * is masked from where it continues, so no run long enough to scrub ever gets out whole. Text in
 * which no character can be part of a secret passes at once.
 */
export interface TokenFilter {
  /** What of `text` (and what was held) may be shown now; may be "". */
  push(text: string): string;
  /** What is still held, scrubbed: to be shown before anything else of the run. */
  flush(): string;
}

export const PASS_TOKENS: TokenFilter = { push: (text) => text, flush: () => "" };

/** How far back the context reaches at least when it holds a quote: a JSON boundary still forming, its key included. */
const BOUNDARY_REACH = 96;
const QUOTE_OR_BACKSLASH = /["\\]/;

/** A filter for one stream; none without a matcher (no secret configured). */
export function createTokenFilter(matcher: SecretMatcher | undefined): TokenFilter {
  if (!matcher) return PASS_TOKENS;
  /** What was shown last, unmasked: a run of a secret may continue it. */
  let before = "";
  let beforeQuoted = false;
  /** What came and is not shown yet. */
  let held = "";
  /** What was shown ends in a mask that what comes next may extend. */
  let open = false;

  const step = (final: boolean): string => {
    const text = before + held;
    const { kept, pos } = matcher.normalise(text);
    let shown = 0; // kept characters in `before`
    while (shown < kept.length && pos[shown]! < before.length) shown++;
    const masked = new Uint8Array(kept.length);
    matcher.mark(kept, masked, shown);
    matcher.widen(kept, pos, masked);
    const keep = final ? 0 : matcher.holdLength(kept, masked, shown);
    let upTo = kept.length - keep;
    // Whitespace after a mask waits with what follows it: a mask that goes on swallows it.
    const afterMask = upTo > shown ? masked[upTo - 1] === 1 : open;
    let cut = final ? text.length : afterMask ? (upTo > shown ? pos[upTo - 1]! + 1 : before.length) : upTo < kept.length ? pos[upTo]! : text.length;
    cut = Math.max(cut, before.length);
    upTo = shown;
    while (upTo < kept.length && pos[upTo]! < cut) upTo++;
    const out = matcher.render(text.slice(before.length, cut), {
      pos: pos.slice(shown, upTo).map((p) => p - before.length),
      masked: masked.subarray(shown, upTo),
      count: upTo - shown,
      open,
    });
    if (upTo > shown) open = masked[upTo - 1] === 1;
    held = text.slice(cut);
    const first = Math.max(0, upTo - (matcher.longest - 1));
    let from = first < upTo ? pos[first]! : cut;
    const quote = cut > 0 ? text.lastIndexOf('"', cut - 1) : -1;
    if (quote >= 0 && quote >= cut - BOUNDARY_REACH) from = Math.min(from, Math.max(0, cut - BOUNDARY_REACH));
    before = text.slice(from, cut);
    beforeQuoted = QUOTE_OR_BACKSLASH.test(before);
    return out;
  };

  /**
   * `step` when nothing is masked and only whitespace is skipped (no quote or backslash about, no
   * mask open): the held end is found by walking back over the text itself.
   */
  const unmasked = (): string => {
    const text = before + held;
    let cut = text.length;
    let end = "";
    for (let i = text.length - 1; i >= before.length && end.length < matcher.longest - 1; i--) {
      if (matcher.isSpace(text.charCodeAt(i))) continue;
      end = text[i] + end;
      if (!matcher.continues(end)) break;
      if (matcher.begins(end)) cut = i;
    }
    held = text.slice(cut);
    let from = cut;
    for (let n = 0; from > 0 && n < matcher.longest - 1; ) if (!matcher.isSpace(text.charCodeAt(--from))) n++;
    const out = text.slice(before.length, cut);
    before = text.slice(from, cut);
    return out;
  };

  return {
    push(text) {
      if (!held && !beforeQuoted && matcher.isPlain(text)) {
        // Nothing before can join what comes after a character no secret holds.
        before = "";
        open = false;
        return text;
      }
      held += text;
      if (open || beforeQuoted || QUOTE_OR_BACKSLASH.test(held) || matcher.mayHold(before + held)) return step(false);
      return unmasked();
    },
    flush() {
      return held ? step(true) : "";
    },
  };
}
