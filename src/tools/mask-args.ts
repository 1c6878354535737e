export const MASK = "***";

/** Returns a copy of `args` with every dotted path in `paths` replaced by a mask. */
export function maskArgs(args: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  if (paths.length === 0) return args;
  const copy = structuredClone(args);
  for (const path of paths) {
    const keys = path.split(".");
    let node: unknown = copy;
    for (let i = 0; i < keys.length - 1 && node && typeof node === "object"; i++) {
      node = (node as Record<string, unknown>)[keys[i]!];
    }
    const last = keys[keys.length - 1]!;
    if (node && typeof node === "object" && last in (node as object)) {
      (node as Record<string, unknown>)[last] = MASK;
    }
  }
  return copy;
}
