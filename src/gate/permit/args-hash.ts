import { createHash } from "node:crypto";

/** JSON with sorted keys: the same call shown and approved must hash the same whatever its key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** sha256 of a call's full arguments, binding an approval to exactly what the person saw. */
export function hashArgs(args: unknown): string {
  return createHash("sha256").update(canonicalJson(args)).digest("hex");
}
