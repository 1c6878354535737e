import { callParts, headParts } from "./card-parts.js";
import type { CardBlock, CardPart, FaceLimits, InterruptCard } from "./card-types.js";

/** A face that holds anything: a mail, a page, the HITL description. */
export const NO_LIMITS: FaceLimits = { maxBlocks: Number.POSITIVE_INFINITY, maxChars: Number.POSITIVE_INFINITY };

/**
 * The card cut into blocks of at most `maxChars` characters, nothing left out: the head, then each
 * call from a block of its own on. A part longer than a block goes on in the next ones, split at a
 * line end where one is near.
 */
export function layOutCard(card: InterruptCard, o: Pick<FaceLimits, "maxChars">): CardBlock[] {
  const groups: Array<{ call_id?: string; parts: CardPart[] }> = [{ parts: headParts(card) }, ...card.calls.map((c) => ({ call_id: c.call_id, parts: callParts(c) }))];
  const blocks: CardBlock[] = [];
  for (const g of groups) {
    let parts: CardPart[] = [];
    let used = 0;
    const flush = () => {
      if (parts.length) blocks.push({ ...(g.call_id !== undefined ? { call_id: g.call_id } : {}), parts });
      parts = [];
      used = 0;
    };
    for (const part of g.parts) {
      // A part that fits a block is kept in one; a longer one must be split anyway, so it starts in the room left.
      const room = o.maxChars - used;
      if (part.text.length > room && part.text.length <= o.maxChars) flush();
      const first = part.text.length > o.maxChars && room > 0 ? room : o.maxChars;
      for (const text of splitText(part.text, o.maxChars, { first })) {
        if (used + text.length > o.maxChars) flush();
        parts.push({ kind: part.kind, text });
        used += text.length;
      }
    }
    flush();
  }
  return blocks;
}

/**
 * What a face with these limits can show of the card. Whole: every block, and the face may offer
 * Approve. Not whole: the first `maxBlocks` blocks, and no Approve there, since Approve approves
 * every open call and a person would approve what they were not shown.
 */
export function fitCard(card: InterruptCard, limits: FaceLimits): { whole: boolean; blocks: CardBlock[] } {
  const blocks = layOutCard(card, limits);
  return blocks.length <= limits.maxBlocks ? { whole: true, blocks } : { whole: false, blocks: blocks.slice(0, limits.maxBlocks) };
}

/** Whether a face with these limits shows every call of the card whole, and so may offer Approve. */
export function showsWhole(card: InterruptCard, limits: FaceLimits): boolean {
  return fitCard(card, limits).whole;
}

/**
 * `s` in pieces of at most `max` characters (the first at most `first`), joined back they are `s`:
 * cut after a newline in the piece's last half, never inside a surrogate pair.
 */
export function splitText(s: string, max: number, o: { first?: number } = {}): string[] {
  const out: string[] = [];
  let rest = s;
  let limit = Math.min(o.first ?? max, max);
  while (rest.length > limit) {
    let end = limit;
    const nl = rest.lastIndexOf("\n", limit - 1);
    if (nl >= limit / 2) end = nl + 1;
    else if (isHighSurrogate(rest.charCodeAt(end - 1))) end -= 1;
    if (end > 0) out.push(rest.slice(0, end));
    rest = rest.slice(end);
    limit = max;
  }
  if (rest || !out.length) out.push(rest);
  return out;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
