import type { RunnableConfig } from "@langchain/core/runnables";

/** A person's decision on one pending call, as it reaches the `call_tool` node. */
export interface GateDecision {
  call_id: string;
  approved: boolean;
  reason?: string;
  /** Hash of the arguments the person was shown; when present, the call must still match it. */
  args_hash?: string;
}

/**
 * Reads `configurable.decisions`: the one way decisions reach the gate, from the Hono server and
 * from LangGraph Studio alike. Accepts an array, an object keyed by call id, or either as a JSON
 * string (what a config form can hold). Anything unreadable counts as no decision: fail closed.
 */
export function readDecisions(config: RunnableConfig | undefined): Map<string, GateDecision> {
  let raw: unknown = config?.configurable?.decisions;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      return new Map();
    }
  }
  const list: unknown[] = Array.isArray(raw)
    ? raw
    : raw && typeof raw === "object"
      ? Object.entries(raw).map(([call_id, d]) => ({ call_id, ...(d as object) }))
      : [];
  const out = new Map<string, GateDecision>();
  for (const d of list) {
    if (!d || typeof d !== "object") continue;
    const { call_id, approved, reason, args_hash } = d as Record<string, unknown>;
    if (typeof call_id !== "string") continue;
    out.set(call_id, {
      call_id,
      approved: approved === true, // only a literal true opens the gate
      reason: typeof reason === "string" && reason ? reason : undefined,
      args_hash: typeof args_hash === "string" ? args_hash : undefined,
    });
  }
  return out;
}
