import { createHash } from "node:crypto";

/** Key order must not matter: the same call shown and approved must hash the same. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** sha256 of a call's full arguments, binding an approval to exactly what the person saw. */
export function hashArgs(args: unknown): string {
  return createHash("sha256").update(canonical(args)).digest("hex");
}
