import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSecretScrubber, SCRUBBED } from "../../../src/ops/index.js";

const KEY = "sk-test-ABCDEFGH12345678";
const TOKEN = "tok-alice-5f2e9a1b7c";
const scrubber = createSecretScrubber([KEY, TOKEN]);

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

describe("token filter", () => {
  it("however the text is cut into tokens, no secret comes out, and the rest comes out whole and in order", () => {
    const part = fc.constantFrom(KEY, TOKEN, "sk-te", "tok-", "s", "t", " ", "hello ", "sk-test-ABC", "***", "x");
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 12 }), (parts, cuts) => {
        const text = parts.join("");
        const { pieces, flushed } = stream(text, cuts);
        const out = pieces.join("") + flushed;
        expect(out).toBe(scrubber.scrubExact(text)); // the configured secrets: credential shapes cannot be told mid-stream
        for (const p of pieces) for (const s of [KEY, TOKEN]) expect(p).not.toContain(s);
      }),
      { numRuns: 2000 },
    );
  });

  it("holds back only an end that could still become a secret", () => {
    const filter = scrubber.tokenFilter();
    expect(filter.push("Hello, world")).toBe("Hello, world"); // nothing here begins a secret
    expect(filter.push(" the key sk-te")).toBe(" the key "); // "sk-te" may be the key
    expect(filter.push("st-ABCDEFGH12345678 is gone")).toBe(`${SCRUBBED} is gone`);
    expect(filter.push(" s")).toBe(" ");
    expect(filter.push("o")).toBe("so"); // "so" begins no secret
    expect(filter.push(" tok-")).toBe(" ");
    expect(filter.flush()).toBe("tok-"); // the message ended: it was not one
    expect(filter.flush()).toBe("");
  });

  it("passes every token as it is when no secret is configured", () => {
    const filter = createSecretScrubber([]).tokenFilter();
    expect(["sk-te", "st", ""].map((t) => filter.push(t))).toEqual(["sk-te", "st", ""]);
    expect(filter.flush()).toBe("");
  });
});
