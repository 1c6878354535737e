import type { GateDecision } from "../permit/gate-decision.js";

/**
 * The one parser for decisions, whichever way they reach the gate: `configurable.decisions` in
 * the run config (the Hono server, a Studio assistant's config, any API client), or the value of
 * LangGraph's `Command({ resume })` at the gate's interrupt (Studio's resume box, the SDK's
 * `command: { resume }`, `useStream().submit`). Accepts an array `[{call_id, approved, reason?,
 * args_hash?}]`, an object keyed by call id, either one as a JSON string, and any of those wrapped
 * as `{ decisions: … }` (what the interrupt's `resume_with` shows). A decision may carry `edited_args`. Anything unreadable counts as
 * no decision, and only a literal `approved: true` approves: fail closed.
 */
export function readDecisions(value: unknown): Map<string, GateDecision> {
  let raw = fromJson(value);
  if (raw && typeof raw === "object" && !Array.isArray(raw) && Object.hasOwn(raw, "decisions")) {
    raw = fromJson((raw as { decisions: unknown }).decisions);
  }
  const list: unknown[] = Array.isArray(raw)
    ? raw
    : raw && typeof raw === "object"
      ? // The key names the call; a `call_id` inside the entry cannot redirect it to another one.
        Object.entries(raw).map(([call_id, d]) => ({ ...(d && typeof d === "object" ? d : {}), call_id }))
      : [];
  const out = new Map<string, GateDecision>();
  for (const d of list) {
    if (!d || typeof d !== "object") continue;
    const { call_id, approved, reason, args_hash, edited_args } = d as Record<string, unknown>;
    if (typeof call_id !== "string") continue;
    out.set(call_id, {
      call_id,
      approved: approved === true, // only a literal true opens the gate
      reason: typeof reason === "string" && reason ? reason : undefined,
      args_hash: typeof args_hash === "string" ? args_hash : undefined,
      // Kept as given (even when not an object): the gate refuses a bad edit, it never drops it.
      ...(edited_args !== undefined && edited_args !== null ? { edited_args: edited_args as Record<string, unknown> } : {}),
    });
  }
  return out;
}

/** A JSON string parsed (undefined when it is not JSON); any other value as it is. */
function fromJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}
