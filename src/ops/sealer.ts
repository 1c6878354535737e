import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { sealingRefusals } from "../protocol/index.js";

/**
 * Seals values the database must not hold in clear (an edit's sensitive arguments, kept while a
 * call decided call by call waits), with a key the database does not hold.
 */
export interface Sealer {
  /** Whether values can be sealed here at all. */
  readonly available: boolean;
  seal(value: unknown): string;
  open(sealed: string): unknown;
}

const VERSION = "v1";

/** AES-256-GCM under `key` (32 bytes): `v1.<iv>.<tag>.<ciphertext>`, base64url each. */
export function keySealer(key: Buffer): Sealer {
  if (key.length !== 32) throw new Error("a sealing key is 32 bytes");
  return {
    available: true,
    seal(value) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error("not a sealed value");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return JSON.parse(Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")) as unknown;
    },
  };
}

/** No key: nothing is sealed, so what would need sealing is refused (`422 unsupported`), never stored in clear. */
export const NO_SEALER: Sealer = {
  available: false,
  seal() {
    throw sealingRefusals.noKeyToSeal();
  },
  open() {
    throw sealingRefusals.noKeyToOpen();
  },
};
