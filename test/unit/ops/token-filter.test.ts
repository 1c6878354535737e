import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSecretScrubber, SCRUBBED } from "../../../src/ops/index.js";

const KEY = "sk-test-ABCDEFGH12345678";
const TOKEN = "tok-alice-5f2e9a1b7c";
const SHORT = "pw-9Xq2"; // shorter than a window: matched whole
const scrubber = createSecretScrubber([KEY, TOKEN, SHORT]);
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** `text` cut at `cuts`, streamed through one filter: what came out of each push, then the flush. */
function stream(text: string, cuts: number[]): { pieces: string[]; flushed: string } {
  const filter = scrubber.tokenFilter();
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const to of [...at, text.length]) {
    pieces.push(filter.push(text.slice(from, to)));
    from = to;
  }
  return { pieces, flushed: filter.flush() };
}

/** The longest run of `secret` (12 characters or more) in `text`, whitespace left out; "" if none. */
function runOf(secret: string, text: string): string {
  const flat = text.replace(/\s+/g, "");
  for (let n = secret.length; n >= 12; n--) for (let i = 0; i + n <= secret.length; i++) if (flat.includes(secret.slice(i, i + n))) return secret.slice(i, i + n);
  return "";
}

describe("token filter", () => {
  it("however the text is cut into tokens, nothing of a secret comes out, and the rest comes out whole, in order, as scrubbing it whole reads", () => {
    const part = fc.constantFrom(KEY, TOKEN, SHORT, KEY.slice(0, 11), KEY.slice(11), "sk-te", "tok-", "s", "t", " ", "\n", "hello ", "sk-test-ABC", "***", "x", b64(KEY), "pw-9");
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 12 }), (parts, cuts) => {
        const text = parts.join("");
        const { pieces, flushed } = stream(text, cuts);
        const out = pieces.join("") + flushed;
        expect(out).toBe(scrubber.scrubExact(text)); // the configured secrets: credential shapes cannot be told mid-stream
        for (const secret of [KEY, TOKEN]) expect(runOf(secret, out), `${secret} in ${JSON.stringify(out)}`).toBe("");
        expect(out).not.toContain(SHORT);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ["the key split by a space over two tokens", ["key: sk-test-ABCD", "EFGH 12345678 ok"], `key: ${SCRUBBED} ok`],
    ["split by a newline", ["key: sk-test-AB\n", "CDEFGH12345678."], `key: ${SCRUBBED}.`],
    ["one character a token", [..."[sk-test-ABCDEFGH12345678]"], `[${SCRUBBED}]`],
    ["base64 in pieces", [b64(KEY).slice(0, 10), b64(KEY).slice(10)], SCRUBBED],
    ["the short secret whole, cut", ["pw-", "9Xq2!"], `${SCRUBBED}!`],
  ])("%s", (_name, tokens, shown) => {
    const filter = scrubber.tokenFilter();
    const out = tokens.map((t) => filter.push(t)).join("") + filter.flush();
    expect(out).toBe(shown);
  });

  it("holds back only an end that could still become part of a secret, never longer than a run less one character", () => {
    const filter = scrubber.tokenFilter();
    expect(filter.push("Hello, ")).toBe("Hello, "); // nothing here begins a secret
    expect(filter.push("world")).toBe("worl"); // "d" may begin a form of one (its base64)
    expect(filter.push(" the key sk-te")).toBe("d the key "); // "sk-te" may be the key
    expect(filter.push("st-ABCDEFGH12345678 is gone")).toBe(`${SCRUBBED} is gon`);
    expect(filter.flush()).toBe("e");
    const long = createSecretScrubber([KEY]).tokenFilter();
    expect(long.push("a sk-test-ABC")).toBe("a "); // 11 held: a 12th would complete a run
    expect(long.flush()).toBe("sk-test-ABC");
    const short = createSecretScrubber([SHORT]).tokenFilter();
    expect(short.push("a pw-9Xq")).toBe("a "); // 6 held: the secret's length less one
    expect(short.flush()).toBe("pw-9Xq");
  });

  it("masks the rest of a run that began in text already let go (another event came between)", () => {
    const filter = scrubber.tokenFilter();
    expect(filter.push("the key sk-test-AB")).toBe("the key ");
    expect(filter.flush()).toBe("sk-test-AB"); // ten characters: not yet a run
    expect(filter.push("CDEFGH12345678 ok.")).toBe(`${SCRUBBED} ok.`);
  });

  it("passes text with no character of a secret at once, and every token as it is when no secret is configured", () => {
    const filter = createSecretScrubber(["ZZZZZZZZZZZZZZZZ"]).tokenFilter();
    for (const t of ["Good", " morning,", " you!"]) expect(filter.push(t)).toBe(t);
    const none = createSecretScrubber([]).tokenFilter();
    expect(["sk-te", "st", ""].map((t) => none.push(t))).toEqual(["sk-te", "st", ""]);
    expect(none.flush()).toBe("");
  });
});
