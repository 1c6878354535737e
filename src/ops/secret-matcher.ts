/** What a scrubbed secret becomes: the same mask as a masked argument. */
export const SCRUBBED = "***";

/** Configured secrets shorter than this are not scrubbed at all: they would eat words. */
export const MIN_SECRET_LENGTH = 4;
/** A run of this many characters of a secret (or of one of its forms) is scrubbed; a shorter one whole. */
export const WINDOW = 12;
/** A base64 form shorter than this is not looked for: it would match inside unrelated base64. */
const MIN_BASE64_FORM = 8;

// What matching skips: whitespace (also as JSON escapes it, `\n`, at any depth of escaping) and
// the boundary between two JSON strings (`", "`, `", "key": "`, or `\", \"` in JSON inside JSON),
// so that a secret cut by a line break or spread over two fields is still one run.
const SPACE = String.raw`(?:\s|\\+[nrt])`;
const QUOTE = String.raw`\\*"`;
const BOUNDARY = String.raw`${QUOTE}(?:${SPACE}|[,:\[\]{}])*(?:${QUOTE}[^"\\\s]{0,64}${QUOTE}${SPACE}*:(?:${SPACE}|[\[{])*)?${QUOTE}`;
const SKIPPED = new RegExp(`${BOUNDARY}|${SPACE}+`, "g");
/** What `\s` matches: with no quote or backslash about, the only characters matching skips. */
const WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff";
const QUOTE_OR_BACKSLASH = /["\\]/;

/** A character's part in matching (`SecretMatcher.classes`). */
const enum Role {
  /** In no secret, and kept: a run of a secret cannot cross it. */
  Plain = 0,
  /** In some secret's form. */
  Candidate = 1,
  /** Whitespace: skipped. */
  Space = 2,
  /** A quote or backslash: may begin a skipped JSON boundary or escape. */
  Escape = 3,
  /** JSON punctuation: skipped inside a boundary. */
  Structure = 4,
}

/** Text with what matching skips left out, and where each character left came from. */
export interface Normalised {
  kept: string;
  pos: number[];
}

/** How `SecretMatcher.render` masks a text: its kept characters, as `normalise` found them, and which are masked. */
export interface Rendering {
  /** Where each kept character is in the text. */
  pos: readonly number[];
  /** Which kept characters are masked. */
  masked: Uint8Array;
  /** How many kept characters are rendered: those in the text. */
  count: number;
  /** The text continues a mask already shown, which a stretch at its start extends. */
  open: boolean;
}

/**
 * The configured secrets as runs to look for: each secret, JSON-escaped (once and twice),
 * URL-encoded and base64-encoded (at each of the three byte offsets into base64's 3-byte groups;
 * standard and URL-safe alphabets), every window of `WINDOW` characters of each form, or a form
 * shorter than that whole. Text is searched with what matching skips left out (`Normalised`), so
 * the runs are found however they were cut, and the whole span they cover in the original is
 * masked, JSON string boundaries inside it kept (so JSON stays JSON).
 *
 * Windows are found Wu–Manber style: a table of how far the window's end may jump for each pair
 * of characters, so ordinary text, whose pairs are in no secret, is read about one character in
 * eleven; a candidate window is then looked up in a set.
 */
export class SecretMatcher {
  /** Every `WINDOW`-long run of a form of a secret. */
  private readonly windows = new Set<string>();
  /** Forms shorter than `WINDOW`, matched whole. */
  private readonly wholes: string[] = [];
  /** Each proper prefix of a window or whole form: what a stream's end may still complete. */
  private readonly prefixes = new Set<string>();
  /** Each proper substring of one: a stream's end that is not one cannot end in a longer prefix. */
  private readonly substrings = new Set<string>();
  /** For the pair of characters ending a window: how far its end may jump (0: look it up). */
  private readonly shift = new Uint8Array(65536).fill(WINDOW - 1);
  /** Each UTF-16 unit's `Role`. */
  private readonly classes = new Uint8Array(65536);
  /** Pairs of characters next to each other in some run (`pairKey`): a run is a chain of them. */
  private readonly pairs = new Uint8Array(65536);
  /** Whether `mayHold` can judge: no secret holds a character that matching may skip. */
  private readonly chains: boolean;
  /** The longest run looked for: a stream holds back less than this. */
  readonly longest: number;
  private readonly shortest: number;

  constructor(secrets: readonly string[]) {
    const runs = new Set<string>();
    for (const secret of secrets) {
      for (const form of formsOf(secret)) {
        const kept = form.replace(SKIPPED, "");
        if (kept.length < WINDOW) {
          if (kept.length >= Math.min(MIN_SECRET_LENGTH, secret.length)) runs.add(kept);
          continue;
        }
        for (let i = 0; i + WINDOW <= kept.length; i++) runs.add(kept.slice(i, i + WINDOW));
      }
    }
    for (const run of runs) {
      if (run.length === WINDOW) this.windows.add(run);
      else this.wholes.push(run);
      for (let end = 1; end < run.length; end++) this.prefixes.add(run.slice(0, end));
      for (let start = 0; start < run.length; start++) {
        for (let end = start + 1; end <= run.length && end - start < run.length; end++) this.substrings.add(run.slice(start, end));
      }
    }
    for (const w of this.windows) {
      for (let q = 1; q < WINDOW; q++) {
        const at = pairKey(w.charCodeAt(q - 1), w.charCodeAt(q));
        this.shift[at] = Math.min(this.shift[at]!, WINDOW - 1 - q);
      }
    }
    for (const c of WHITESPACE) this.classes[c.charCodeAt(0)] = Role.Space;
    for (const c of ",:[]{}") this.classes[c.charCodeAt(0)] = Role.Structure;
    this.classes[0x22] = Role.Escape;
    this.classes[0x5c] = Role.Escape;
    let chains = true;
    for (const run of runs) {
      for (let i = 0; i < run.length; i++) {
        const c = run.charCodeAt(i);
        if (this.classes[c] !== Role.Plain && this.classes[c] !== Role.Candidate) chains = false;
        this.classes[c] = Role.Candidate;
        if (i > 0) this.pairs[pairKey(run.charCodeAt(i - 1), c)] = 1;
      }
    }
    this.chains = chains;
    const lengths = [...runs].map((r) => r.length);
    this.longest = Math.max(...lengths);
    this.shortest = Math.min(...lengths);
  }

  /** `text` with every run of a secret in it masked. */
  scrub(text: string): string {
    if (text.length < this.shortest || !this.mayHold(text)) return text;
    const n = this.normalise(text);
    const masked = new Uint8Array(n.kept.length);
    this.mark(n.kept, masked, 0);
    this.widen(n.kept, n.pos, masked);
    return this.render(text, { pos: n.pos, masked, count: n.kept.length, open: false });
  }

  /**
   * Whether `text` may hold a run of a secret, in one pass and without building the text as
   * matching reads it: a run is a chain of pairs of its characters once what matching skips is
   * left out, so text with no chain as long as the shortest run holds none. Every skippable
   * character is left out here (also a quote or comma that matching keeps: that only lengthens
   * chains); a JSON key between two strings is both kept and left out, as two chains.
   */
  mayHold(text: string): boolean {
    if (!this.chains) return true;
    const { pairs, classes } = this;
    const least = this.shortest;
    let prev = -1;
    let length = 0;
    // The chain as it would be had the last quoted string been a key inside a boundary.
    let keyPrev = -1;
    let keyLength = 0;
    // The longer chain at each of the last two quotes.
    let atQuotePrev = -1;
    let atQuoteLength = 0;
    let lastQuotePrev = -1;
    let lastQuoteLength = 0;
    let afterQuote = false;
    let escaped = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const role = classes[c]!;
      if (role <= Role.Candidate && !escaped) {
        // Most characters: kept.
        afterQuote = false;
        length = prev >= 0 && pairs[pairKey(prev, c)] ? length + 1 : role;
        prev = c;
        if (keyLength) {
          keyLength = pairs[pairKey(keyPrev, c)] ? keyLength + 1 : 0;
          keyPrev = c;
        }
        if (length >= least || keyLength >= least) return true;
        continue;
      }
      if (role === Role.Space) continue;
      if (c === 0x5c) {
        escaped = true;
        continue;
      }
      if (escaped) {
        escaped = false;
        if (c === 0x6e || c === 0x72 || c === 0x74) continue; // \n, \r, \t
      }
      if (c === 0x22) {
        atQuotePrev = lastQuotePrev;
        atQuoteLength = lastQuoteLength;
        const key = keyLength > length;
        lastQuotePrev = key ? keyPrev : prev;
        lastQuoteLength = key ? keyLength : length;
        afterQuote = true;
        continue;
      }
      if (role === Role.Structure) {
        if (c === 0x3a && afterQuote && atQuoteLength > keyLength) {
          keyPrev = atQuotePrev;
          keyLength = atQuoteLength;
        }
        continue;
      }
      afterQuote = false;
      length = prev >= 0 && pairs[pairKey(prev, c)] ? length + 1 : role === Role.Candidate ? 1 : 0;
      prev = c;
      if (keyLength) {
        keyLength = pairs[pairKey(keyPrev, c)] ? keyLength + 1 : 0;
        keyPrev = c;
      }
      if (length >= least || keyLength >= least) return true;
    }
    return false;
  }

  /** Whether this UTF-16 unit is whitespace, which matching skips. */
  isSpace(code: number): boolean {
    return this.classes[code] === Role.Space;
  }

  /** Whether `end`, the end of a stream, may be the start of a run of a secret. */
  begins(end: string): boolean {
    return this.prefixes.has(end);
  }

  /** Whether `end` is part of a run of a secret: if not, no longer end of the same text begins one. */
  continues(end: string): boolean {
    return this.substrings.has(end);
  }

  /** `text` as matching reads it. */
  normalise(text: string): Normalised {
    const pos: number[] = [];
    if (!QUOTE_OR_BACKSLASH.test(text)) {
      let kept = "";
      let from = 0;
      for (let i = 0; i < text.length; i++) {
        if (this.classes[text.charCodeAt(i)] !== Role.Space) {
          pos.push(i);
          continue;
        }
        kept += text.slice(from, i);
        from = i + 1;
      }
      return { kept: kept + text.slice(from), pos };
    }
    let kept = "";
    let at = 0;
    for (const m of text.matchAll(SKIPPED)) {
      for (let i = at; i < m.index; i++) pos.push(i);
      kept += text.slice(at, m.index);
      at = m.index + m[0].length;
    }
    for (let i = at; i < text.length; i++) pos.push(i);
    return { kept: kept + text.slice(at), pos };
  }

  /**
   * Marks in `masked` each character of `kept` inside a run of a secret that ends at `from` or
   * later; without `masked`, only whether there is one.
   */
  mark(kept: string, masked: Uint8Array | undefined, from: number): boolean {
    let found = false;
    if (this.windows.size) {
      for (let end = Math.max(WINDOW - 1, from); end < kept.length; ) {
        const jump = this.shift[pairKey(kept.charCodeAt(end - 1), kept.charCodeAt(end))]!;
        if (jump) {
          end += jump;
          continue;
        }
        if (this.windows.has(kept.slice(end - WINDOW + 1, end + 1))) {
          if (!masked) return true;
          masked.fill(1, end - WINDOW + 1, end + 1);
          found = true;
        }
        end++;
      }
    }
    for (const whole of this.wholes) {
      for (let at = kept.indexOf(whole, Math.max(0, from - whole.length + 1)); at >= 0; at = kept.indexOf(whole, at + 1)) {
        if (!masked) return true;
        masked.fill(1, at, at + whole.length);
        found = true;
      }
    }
    return found;
  }

  /** A mask never ends between a backslash and what it escapes, nor starts there: JSON stays JSON. */
  widen(kept: string, pos: readonly number[], masked: Uint8Array): void {
    for (let i = 0; i < kept.length; i++) {
      if (!masked[i]) continue;
      if (i > 0 && !masked[i - 1] && kept[i - 1] === "\\" && pos[i - 1] === pos[i]! - 1) masked[i - 1] = 1;
      if (i + 1 < kept.length && !masked[i + 1] && kept[i] === "\\") masked[i + 1] = 1;
    }
  }

  /**
   * How many characters at the end of `kept` (none before `from`, none masked) may still become
   * part of a run of a secret with what comes next.
   */
  holdLength(kept: string, masked: Uint8Array, from: number): number {
    let hold = 0;
    const limit = Math.min(this.longest - 1, kept.length - from);
    for (let k = 1; k <= limit; k++) {
      const end = kept.slice(kept.length - k);
      if (masked[kept.length - k] || !this.continues(end)) break;
      if (this.begins(end)) hold = k;
    }
    return hold;
  }

  /** Whether no run of a secret can include any of `text` nor cross it: no candidate, and a character that is kept. */
  isPlain(text: string): boolean {
    let kept = false;
    for (let i = 0; i < text.length; i++) {
      const role = this.classes[text.charCodeAt(i)];
      if (role === Role.Candidate || role === Role.Escape) return false;
      if (role === Role.Plain || role === Role.Structure) kept = true; // no quote about: not inside a boundary
    }
    return kept;
  }

  /**
   * `text` with its first `count` kept characters masked as `masked` says: each masked stretch
   * becomes one mask (the whitespace inside it too), restarted after a JSON boundary inside it.
   */
  render(text: string, o: Rendering): string {
    const { pos, masked } = o;
    let out = "";
    let at = 0;
    for (let i = 0; i < o.count; i++) {
      if (!masked[i]) continue;
      let j = i;
      while (j + 1 < o.count && masked[j + 1]) j++;
      const gap = text.slice(at, pos[i]);
      out += o.open && i === 0 && !gap.includes('"') ? "" : gap + SCRUBBED;
      for (let k = i; k < j; k++) {
        const inside = text.slice(pos[k]! + 1, pos[k + 1]);
        if (inside.includes('"')) out += inside + SCRUBBED;
      }
      at = pos[j]! + 1;
      i = j;
    }
    return out + text.slice(at);
  }
}

/** A pair of UTF-16 units as an index into a 64K table (units beyond Latin-1 share entries: that only shortens jumps). */
function pairKey(a: number, b: number): number {
  return ((a & 0xff) << 8) | (b & 0xff);
}

/** The ways a secret can appear in text: as it is, JSON-escaped, URL-encoded, base64-encoded. */
function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const url = encodeURIComponent(secret);
  const forms = [
    secret,
    json,
    JSON.stringify(json).slice(1, -1),
    url,
    url.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    url.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  ];
  const bytes = Buffer.from(secret, "utf8");
  for (let offset = 0; offset < 3; offset++) {
    const b64 = base64Inner(bytes, offset);
    if (b64.length >= MIN_BASE64_FORM) forms.push(b64, b64.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return [...new Set(forms)];
}

/**
 * The base64 characters of `bytes` that do not depend on what surrounds them, when they start
 * `offset` bytes into a 3-byte group: base64 of the same secret inside longer data reads
 * differently at each offset.
 */
function base64Inner(bytes: Buffer, offset: number): string {
  const text = Buffer.concat([Buffer.alloc(offset), bytes, Buffer.alloc(2)]).toString("base64");
  return text.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}
