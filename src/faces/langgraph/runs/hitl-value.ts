import { type CallCard, callParts, interruptCard, partsText } from "../../../gate/index.js";
import type { InterruptPayload } from "../../../protocol/index.js";

/** One interrupt as LangGraph shows it in `__interrupt__`, state reads and `tasks[].interrupts`. */
export interface LangGraphInterrupt {
  id: string;
  value: unknown;
}

/**
 * An open interrupt as LangGraph clients read it: the tool calls as one HITL request, keyed by
 * tollgate's interrupt id, then each question the graph asked under its own id. The request
 * carries both casings: Python's snake_case (what Agent Chat UI renders) and LangChain JS's
 * camelCase (what `langgraph dev` sends and `@langchain/react` apps read), so frontend code
 * written against either server carries over. The calls' arguments arrive masked; the
 * description is built from them, never from the raw ones.
 */
export function interruptsOf(payload: InterruptPayload): LangGraphInterrupt[] {
  const out: LangGraphInterrupt[] = [];
  if (payload.calls.length) out.push({ id: payload.interrupt_id, value: hitlValue(payload) });
  for (const q of payload.questions) out.push({ id: q.question_id, value: q.value });
  return out;
}

/** The HITL value of an interrupt's tool calls: both casings and the `tollgate` block. */
function hitlValue(payload: InterruptPayload) {
  const card = interruptCard(payload);
  const actionRequests = payload.calls.map((c, i) => ({ name: c.name, args: c.args, description: describeCall(card.calls[i]!, { deadline: card.expires_at }) }));
  const allowed = (editable: boolean) => (editable ? ["approve", "edit", "reject"] : ["approve", "reject"]);
  return {
    action_requests: actionRequests,
    review_configs: payload.calls.map((c) => ({ action_name: c.name, allowed_decisions: allowed(c.editable), args_schema: c.args_schema })),
    actionRequests,
    reviewConfigs: payload.calls.map((c) => ({ actionName: c.name, allowedDecisions: allowed(c.editable), argsSchema: c.args_schema })),
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

/**
 * The middleware's own opening, then the call as the gate's card shows it on every face: which
 * call at which version, the policy in words, the masked arguments, the preview, the deadline.
 */
function describeCall(call: CallCard, o: { deadline: string }): string {
  return `Tool execution requires approval\n\n${partsText(callParts(call))}\nDecide by ${o.deadline}`;
}
