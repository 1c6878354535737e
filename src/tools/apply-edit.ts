import { canonicalJson, RESERVED_ARG_NAMES } from "../gate/index.js";
import { editRefusals } from "../protocol/index.js";
import { MASK } from "./mask-args.js";
import type { ToolRegistry } from "./tool-registry.js";

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
  if (!registry.isEditable(call.name)) return { error: editRefusals.notEditable(call.name) };
  if (!patch || typeof patch !== "object" || Array.isArray(patch)) return { error: editRefusals.notAnObject() };
  const known = Object.keys((registry.argsSchema(call.name).properties as Record<string, unknown> | undefined) ?? {});
  const entries = Object.entries(patch as Record<string, unknown>);
  for (const [key, value] of entries) {
    if (RESERVED_ARG_NAMES.has(key)) return { error: editRefusals.reservedName(key) };
    if (!known.includes(key)) return { error: editRefusals.notAnArgument(key, call.name) };
    if (value === MASK) return { error: editRefusals.theMask(key, MASK) };
  }
  const args = { ...call.args, ...Object.fromEntries(entries) };
  const changed = entries.filter(([key]) => canonicalJson(args[key]) !== canonicalJson(call.args[key])).map(([key]) => key);
  return { args, changed };
}
