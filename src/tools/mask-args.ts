import { escapeRegExp } from "../lib/index.js";

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

/**
 * A call's arguments as shown when there are no masks to go by (a tool the server does not know):
 * every top-level argument masked, its name kept.
 */
export function maskAll(args: Record<string, unknown>): Record<string, unknown> {
  if (!args || typeof args !== "object") return {};
  return Object.fromEntries(Object.keys(args).map((k) => [k, MASK]));
}

/**
 * The exact values found at `paths` in the arguments (each a whole value, or every string and
 * number inside an object or array there), as the text they would show in an error message:
 * strings as they are and in their JSON-escaped form, finite numbers in their string form.
 * Empty and blank strings are left out: there is nothing to hide in them, and masking them would
 * mask the whole message. Booleans and null are left out too: their words are not secrets.
 */
export function sensitiveValues(args: unknown, paths: readonly string[]): string[] {
  const found = new Set<string>();
  for (const path of paths) if (path) collectAt(args, path.split("."), found);
  return [...found];
}

/** Values shorter than this are masked only where they stand alone: as substrings they would eat words. */
const MIN_SUBSTRING_LENGTH = 4;

/**
 * Free text (a tool's or a preview's error message) with every occurrence of each value replaced
 * by the mask, longest first, in one pass so no value is matched inside another's mask. A value
 * shorter than four characters is replaced where no letter or digit touches it ("pin 42", not the
 * "42" of "HTTP 429").
 */
export function maskValues(text: string, values: readonly string[]): string {
  if (values.length === 0 || !text) return text;
  const pattern = [...values]
    .sort((a, b) => b.length - a.length)
    .map((v) => (v.length < MIN_SUBSTRING_LENGTH ? `(?<![\\p{L}\\p{N}])${escapeRegExp(v)}(?![\\p{L}\\p{N}])` : escapeRegExp(v)))
    .join("|");
  return text.replace(new RegExp(pattern, "gu"), MASK);
}

/** Every value inside `value`, as `sensitiveValues` keeps them. */
function collectLeaves(value: unknown, found: Set<string>, depth = 0): void {
  if (typeof value === "string") {
    if (!value.trim()) return;
    found.add(value);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) found.add(escaped);
  } else if (typeof value === "number" || typeof value === "bigint") {
    if (typeof value === "bigint" || Number.isFinite(value)) found.add(String(value));
  } else if (value && typeof value === "object" && depth < 32) {
    for (const v of Object.values(value)) collectLeaves(v, found, depth + 1);
  }
}

/**
 * Walks a dotted path (`keys`: what is left of it) the way `maskAt` does (arrays transparent
 * unless indexed) and collects what it ends at.
 */
function collectAt(node: unknown, keys: readonly string[], found: Set<string>): void {
  if (!node || typeof node !== "object") return;
  const [key, ...rest] = keys as [string, ...string[]];
  const last = rest.length === 0;
  if (Array.isArray(node)) {
    if (/^\d+$/.test(key) && Number(key) < node.length) {
      if (last) collectLeaves(node[Number(key)], found);
      else collectAt(node[Number(key)], rest, found);
      return;
    }
    for (const item of node) collectAt(item, keys, found);
    return;
  }
  const obj = node as Record<string, unknown>;
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return;
  if (last) collectLeaves(obj[key], found);
  else collectAt(obj[key], rest, found);
}
