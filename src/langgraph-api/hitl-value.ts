import type { InterruptPayload } from "../protocol/index.js";

/** One interrupt as LangGraph shows it in `__interrupt__`, state reads and `tasks[].interrupts`. */
export interface LangGraphInterrupt {
  id: string;
  value: unknown;
}

/**
 * An open interrupt as LangGraph clients read it: the tool calls as one HITL request in Python's
 * snake_case (what Agent Chat UI renders), keyed by tollgate's interrupt id, then each question the
 * graph asked under its own id. The calls' arguments arrive masked; the description is built from
 * them, never from the raw ones.
 */
export function interruptsOf(payload: InterruptPayload): LangGraphInterrupt[] {
  const out: LangGraphInterrupt[] = [];
  if (payload.calls.length) out.push({ id: payload.interrupt_id, value: hitlValue(payload) });
  for (const q of payload.questions) out.push({ id: q.question_id, value: q.value });
  return out;
}

function hitlValue(payload: InterruptPayload) {
  return {
    action_requests: payload.calls.map((c) => ({ name: c.name, args: c.args, description: describeCall(c.name, c.args) })),
    review_configs: payload.calls.map((c) => ({
      action_name: c.name,
      allowed_decisions: c.editable ? ["approve", "edit", "reject"] : ["approve", "reject"],
      args_schema: c.args_schema,
    })),
    tollgate: {
      interrupt_id: payload.interrupt_id,
      expires_at: payload.expires_at,
      calls: payload.calls.map((c) => ({
        call_id: c.call_id,
        ...(c.version !== undefined ? { version: c.version } : {}),
        policy: c.policy,
        ...(c.requires ? { requires: c.requires } : {}),
        ...(c.approvals ? { approvals: c.approvals } : {}),
        editable: c.editable,
        ...(c.preview !== undefined ? { preview: c.preview } : {}),
      })),
    },
  };
}

/** The middleware's own wording, over the masked arguments. */
function describeCall(name: string, args: Record<string, unknown>): string {
  return `Tool execution requires approval\n\nTool: ${name}\nArgs: ${JSON.stringify(args, null, 2)}`;
}
