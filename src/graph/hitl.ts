import type { ToolCall } from "@langchain/core/messages/tool";
import { canonicalJson } from "../tools/index.js";

/**
 * LangChain's `humanInTheLoopMiddleware` (createAgent) pauses with one `interrupt()` per AI
 * message: `{ actionRequests: [{ name, args, description? }], reviewConfigs: [{ actionName,
 * allowedDecisions }] }` (Python and Agent Chat UI spell them `action_requests`, `review_configs`,
 * `action_name`, `allowed_decisions`). Its requests carry no call ids; it resumes with
 * `{ decisions: [...] }`, exactly one per request, in order.
 */
export interface HitlRequest {
  actions: Array<{ name: string; args: Record<string, unknown> }>;
  /** Decision types allowed, by tool name. */
  allowed: ReadonlyMap<string, readonly string[]>;
}

/** A decision as the middleware takes it. */
export type HitlDecision = { type: "approve" } | { type: "edit"; editedAction: { name: string; args: Record<string, unknown> } } | { type: "reject"; message: string };

const ALL_DECISIONS = ["approve", "edit", "reject"] as const;

/** The middleware's request, if an interrupt's value is one. */
export function readHitlRequest(value: unknown): HitlRequest | undefined {
  if (!value || typeof value !== "object") return undefined;
  const v = value as Record<string, unknown>;
  const actions = v.actionRequests ?? v.action_requests;
  if (!Array.isArray(actions)) return undefined;
  const reviews = (v.reviewConfigs ?? v.review_configs ?? []) as Array<Record<string, unknown>>;
  const allowed = new Map<string, readonly string[]>();
  for (const r of Array.isArray(reviews) ? reviews : []) {
    const name = r.actionName ?? r.action_name;
    const decisions = r.allowedDecisions ?? r.allowed_decisions;
    if (typeof name === "string" && Array.isArray(decisions)) allowed.set(name, decisions.filter((d): d is string => typeof d === "string"));
  }
  const read = actions.map((a: unknown) => {
    const x = (a ?? {}) as Record<string, unknown>;
    return { name: String(x.name ?? ""), args: (x.args && typeof x.args === "object" ? x.args : {}) as Record<string, unknown> };
  });
  return { actions: read, allowed };
}

/** The decision types the middleware allows for a tool (all three when it says nothing). */
export function allowedDecisions(req: HitlRequest, name: string): readonly string[] {
  return req.allowed.get(name) ?? ALL_DECISIONS;
}

/**
 * The AI message's tool calls the requests stand for: in order, each the next call with the same
 * name and equal arguments (calls the middleware did not ask about are skipped: it runs them
 * without asking). Undefined when a request matches no call.
 */
export function matchActions(req: HitlRequest, calls: readonly ToolCall[]): ToolCall[] | undefined {
  const out: ToolCall[] = [];
  let from = 0;
  for (const action of req.actions) {
    const want = canonicalJson(action.args);
    let found = -1;
    for (let i = from; i < calls.length; i++) {
      if (calls[i]!.name === action.name && canonicalJson(calls[i]!.args) === want) {
        found = i;
        break;
      }
    }
    if (found < 0) return undefined;
    out.push(calls[found]!);
    from = found + 1;
  }
  return out;
}
