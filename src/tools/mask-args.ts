export const MASK = "***";

/**
 * Returns a copy of `args` with every dotted path in `paths` replaced by the mask. A path that is
 * missing leaves the arguments as they are; see `maskPaths` for arrays.
 */
export function maskArgs(args: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  if (paths.length === 0) return args;
  return maskPaths(args, paths).value as Record<string, unknown>;
}

/**
 * A tool's output as people see it: when it is JSON with an object or array at the top, every
 * sensitive path is masked and the result re-serialized; any other output (plain text, a bare
 * value, JSON with none of the paths) is returned exactly as it was, byte for byte.
 */
export function maskOutput(output: string, paths: readonly string[]): string {
  if (paths.length === 0) return output;
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    return output; // not JSON: free text is not scanned
  }
  if (!parsed || typeof parsed !== "object") return output;
  const { value, masked } = maskPaths(parsed, paths);
  return masked ? JSON.stringify(value) : output;
}

/**
 * Masks dotted paths in a copy of `value`. An array on the way is transparent: the rest of the
 * path applies to each of its elements (`items.email` masks every item's email), unless the next
 * key is an index (`items.0.email`). The value at the end of a path is replaced whole, object or
 * not. `masked` says whether anything was.
 */
export function maskPaths(value: unknown, paths: readonly string[]): { value: unknown; masked: boolean } {
  if (paths.length === 0 || !value || typeof value !== "object") return { value, masked: false };
  const copy: unknown = structuredClone(value);
  let masked = false;
  for (const path of paths) if (path && maskAt(copy, path.split("."), 0)) masked = true;
  return { value: copy, masked };
}

function maskAt(node: unknown, keys: readonly string[], i: number): boolean {
  if (!node || typeof node !== "object") return false;
  const key = keys[i]!;
  if (Array.isArray(node)) {
    if (/^\d+$/.test(key) && Number(key) < node.length) {
      if (i === keys.length - 1) {
        node[Number(key)] = MASK;
        return true;
      }
      return maskAt(node[Number(key)], keys, i + 1);
    }
    let any = false;
    for (const item of node) if (maskAt(item, keys, i)) any = true;
    return any;
  }
  const obj = node as Record<string, unknown>;
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return false;
  if (i === keys.length - 1) {
    obj[key] = MASK;
    return true;
  }
  return maskAt(obj[key], keys, i + 1);
}
