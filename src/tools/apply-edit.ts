import { canonicalJson } from "./args-hash.js";
import { MASK } from "./mask-args.js";
import type { ToolRegistry } from "./tool-registry.js";

/**
 * Names that can never be an argument: merging them would reach the object's prototype, and a
 * JSON parser or validator may drop them silently, so they are refused wherever an edit is read.
 */
export const RESERVED_ARG_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** A call's arguments after a person's edit, and which top-level keys it really changed. */
export type EditResult = { args: Record<string, unknown>; changed: string[] } | { error: string };

/**
 * Applies `edited_args` to a call: a shallow merge in which keys not given keep their value, so a
 * masked field can stay untouched. Refused: a tool not marked editable, a key the tool's schema
 * does not have (or a reserved name), and the mask itself as a value (a person cannot have meant to send `***`). The
 * merged arguments still go through the tool's schema before anything runs.
 */
export function applyEdit(registry: ToolRegistry, call: { name: string; args: Record<string, unknown> }, patch: unknown): EditResult {
  if (patch === undefined) return { args: call.args, changed: [] };
  if (!registry.isEditable(call.name)) return { error: `Tool '${call.name}' is not editable` };
  if (!patch || typeof patch !== "object" || Array.isArray(patch)) return { error: "edited_args must be an object" };
  const known = Object.keys((registry.argsSchema(call.name).properties as Record<string, unknown> | undefined) ?? {});
  const entries = Object.entries(patch as Record<string, unknown>);
  for (const [key, value] of entries) {
    if (RESERVED_ARG_NAMES.has(key)) return { error: `edited_args: '${key}' can never be an argument name` };
    if (!known.includes(key)) return { error: `edited_args: '${key.slice(0, 64)}' is not an argument of ${call.name}` };
    if (value === MASK) return { error: `edited_args: '${key}' is the mask "${MASK}", not a value` };
  }
  const args = { ...call.args, ...Object.fromEntries(entries) };
  const changed = entries.filter(([key]) => canonicalJson(args[key]) !== canonicalJson(call.args[key])).map(([key]) => key);
  return { args, changed };
}
