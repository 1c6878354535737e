/**
 * Sealing what the database must not hold in clear: a sealed value opens only with its key, any
 * change to it is refused, a key file is made once and shared, and without a key nothing that
 * needs sealing is stored (refused with `unsupported`).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keySealer, NO_SEALER, sealingKeyFile } from "../../../src/ops/index.js";

describe("sealer", () => {
  const key = randomBytes(32);

  it("round-trips a value, and the sealed text shows nothing of it", () => {
    const sealer = keySealer(key);
    const sealed = sealer.seal({ account: "ACCT-PLUM-SPARROW" });
    expect(sealed).not.toContain("PLUM");
    expect(sealer.open(sealed)).toEqual({ account: "ACCT-PLUM-SPARROW" });
    // A fresh IV each time: the same value never seals to the same text.
    expect(sealer.seal({ account: "ACCT-PLUM-SPARROW" })).not.toBe(sealed);
  });

  it("refuses a tampered value, and one sealed under another key", () => {
    const sealed = keySealer(key).seal("secret");
    const [v, iv, tag, body] = sealed.split(".");
    const flipped = Buffer.from(body!, "base64url");
    flipped[0]! ^= 1;
    expect(() => keySealer(key).open([v, iv, tag, flipped.toString("base64url")].join("."))).toThrow();
    expect(() => keySealer(randomBytes(32)).open(sealed)).toThrow();
    expect(() => keySealer(key).open("not sealed")).toThrow(/not a sealed value/);
  });

  it("without a key, sealing is refused with unsupported, naming SEALING_KEY", () => {
    expect(() => NO_SEALER.seal("x")).toThrow(expect.objectContaining({ code: "unsupported", message: expect.stringContaining("SEALING_KEY") }));
  });

  it("a data directory's key file is made once, owner-only, and read back the same", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-seal-"));
    try {
      const first = sealingKeyFile(dir);
      expect(first).toHaveLength(32);
      expect(sealingKeyFile(dir).equals(first)).toBe(true);
      expect(fs.statSync(path.join(dir, "sealing.key")).mode & 0o777).toBe(0o600);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
