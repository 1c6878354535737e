import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Where a SQLite deployment keeps its sealing key when SEALING_KEY is unset: beside the database, never in it. */
export const SEALING_KEY_FILE = "sealing.key";

/**
 * The sealing key kept in `dataDir` (made once, readable by the owner only). Made with `wx`, so
 * two processes starting on one directory agree on one key.
 */
export function sealingKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, SEALING_KEY_FILE);
  try {
    fs.writeFileSync(file, randomBytes(32).toString("base64"), { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key (base64)`);
  return key;
}
