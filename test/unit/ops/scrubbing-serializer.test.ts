import { describe, expect, it } from "vitest";
import { createSecretScrubber, SCRUBBED } from "../../../src/ops/index.js";
import { ScrubbingSerializer } from "../../../src/store/scrubbing-serializer.js";

const KEY = "sk-test-ABCDEFGH12345678";
const serializer = new ScrubbingSerializer(createSecretScrubber([KEY]));

/** What the serializer would store for `value`, as text. */
async function stored(value: unknown): Promise<string> {
  const [, bytes] = await serializer.dumpsTyped(value);
  return new TextDecoder().decode(bytes);
}

describe("scrubbing serializer", () => {
  it("masks the key spread over separate fields, each piece too short to be a run, and what it stores is still JSON", async () => {
    const value = { parts: [KEY.slice(0, 8), KEY.slice(8, 16), KEY.slice(16)], key_start: KEY.slice(0, 11), key_end: KEY.slice(11, 22), id: "m1" };
    expect(JSON.parse(await stored(value))).toEqual({ parts: [SCRUBBED, SCRUBBED, SCRUBBED], key_start: SCRUBBED, key_end: SCRUBBED, id: "m1" });
  });

  it("masks the key split by a newline inside one field, and leaves a value without it as it was", async () => {
    expect(JSON.parse(await stored({ error: `refused ${KEY.slice(0, 6)}\n${KEY.slice(6)}` }))).toEqual({ error: `refused ${SCRUBBED}` });
    const plain = { error: "refused", tool: "explode", n: 12345678 };
    expect(JSON.parse(await stored(plain))).toEqual(plain);
  });
});
