import type { ToolCall } from "@langchain/core/messages/tool";
import { bindResume, readDecisions } from "../../gate/index.js";
import type { InterruptPayload } from "../../protocol/index.js";
import type { GateDecision, ToolRegistry } from "../../tools/index.js";

/**
 * The decisions a `Command({ resume })` value (or `configurable.decisions`) gives the kit's gate,
 * by call id: tollgate's `{decisions: [{call_id, approved, …}]}` (what the interrupt's
 * `resume_with` says), or the HITL middleware's `{decisions: [{type: "approve" | "edit" |
 * "reject"}]}`, by position in the interrupt's `calls`. Both go through the gate's own readers; a
 * value neither reads decides nothing (every call is then rejected).
 */
export function resumeDecisions(value: unknown, asked: readonly ToolCall[], registry: ToolRegistry): Map<string, GateDecision> {
  const parsed = typeof value === "string" ? fromJson(value) : value;
  if (!isPositional(parsed)) return readDecisions(value);
  // The calls as the interrupt showed them (masked), so an edit that keeps a masked field keeps it.
  // Binding reads only the open calls' ids, names and arguments: the rest of a payload is the server's.
  const open = {
    interrupt_id: "",
    questions: [],
    calls: asked.map((c) => ({ call_id: c.id!, name: c.name, args: registry.mask(c.name, c.args) })),
  } as unknown as InterruptPayload;
  try {
    return readDecisions(bindResume(parsed, open).decisions);
  } catch {
    // More decisions than calls, an edit of another tool, an unknown type: nothing is approved.
    return new Map();
  }
}

/** `{decisions: [...]}` whose entries name no call: the HITL middleware's positional form. */
function isPositional(value: unknown): value is { decisions: unknown[] } {
  const list = value && typeof value === "object" ? (value as { decisions?: unknown }).decisions : undefined;
  return Array.isArray(list) && list.length > 0 && list.every((d) => d === null || (typeof d === "object" && !Object.hasOwn(d as object, "call_id")));
}

function fromJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
