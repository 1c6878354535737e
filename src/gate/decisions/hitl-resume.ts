import { isDeepStrictEqual } from "node:util";
import { type Answer, type Decision, type InterruptPayload, refusals } from "../../protocol/index.js";

/**
 * A resume in tollgate's terms: every decision bound to a call id. Not yet checked: the caller
 * holds it to `POST …/resume`'s schema (tollgate's own form arrives here as it was sent).
 */
export interface BoundResume {
  interruptId: string;
  decisions: unknown;
  answers: unknown;
}

/**
 * `command.resume` in the three forms LangGraph clients send, against the open interrupt (as
 * shown: masked): the HITL middleware's `{decisions}` by position in `action_requests`; LangGraph's
 * map keyed by `__interrupt__[].id`; tollgate's own `{interrupt_id, decisions, answers}`. A lone
 * question may also be answered with its bare value, as `Command({resume: value})` does. An
 * approval or edit may name the call's `version` it was shown (`{type: "approve", version}`).
 */
export function bindResume(resume: unknown, open: InterruptPayload): BoundResume {
  const obj = isObject(resume) ? resume : undefined;
  if (obj && typeof obj.interrupt_id === "string") return { interruptId: obj.interrupt_id, decisions: obj.decisions, answers: obj.answers ?? [] };
  if (obj && Array.isArray(obj.decisions)) {
    return { interruptId: open.interrupt_id, decisions: positional(obj.decisions, open), answers: [] };
  }
  const ids = new Set([open.interrupt_id, ...open.questions.map((q) => q.question_id)]);
  if (obj && Object.keys(obj).length > 0 && Object.keys(obj).every((k) => ids.has(k))) {
    const decisions: Decision[] = [];
    const answers: Answer[] = [];
    for (const [key, value] of Object.entries(obj)) {
      if (key !== open.interrupt_id) answers.push({ question_id: key, value });
      else if (isObject(value) && Array.isArray(value.decisions)) decisions.push(...positional(value.decisions, open));
      else throw refusals.hitlNeedsDecisions();
    }
    return { interruptId: open.interrupt_id, decisions, answers };
  }
  if (open.calls.length === 0 && open.questions.length === 1 && resume !== undefined) {
    return { interruptId: open.interrupt_id, decisions: [], answers: [{ question_id: open.questions[0]!.question_id, value: resume }] };
  }
  throw refusals.hitlUnreadable();
}

/**
 * The middleware's decisions, one per action request in order, each bound to the call it stands
 * for. Fewer than the calls: the calls left out get no decision (tollgate rejects them, except in
 * an interrupt decided call by call, where they stay open; `null` leaves one out too); more → 400.
 * An edit sends whole arguments as it was shown them, masked fields included: only the keys whose
 * value differs from what was shown become `edited_args`, so a masked field stays as it was.
 */
function positional(list: unknown[], open: InterruptPayload): Decision[] {
  if (list.length > open.calls.length) {
    throw refusals.hitlTooMany(list.length, open.calls.length);
  }
  return list.flatMap((raw, i): Decision[] => {
    const call = open.calls[i]!;
    // `null` passes over a call: in an interrupt decided call by call, it stays open for others.
    if (raw === null) return [];
    if (!isObject(raw)) throw refusals.hitlNotObject(i);
    // The version the person was shown, when the client names it; the tollgate schema checks it.
    const version = raw.version !== undefined ? { version: raw.version as number } : {};
    switch (raw.type) {
      case "approve":
        return [{ call_id: call.call_id, approved: true, ...version }];
      case "reject":
        return [{ call_id: call.call_id, approved: false, ...(typeof raw.message === "string" && raw.message ? { reason: raw.message } : {}) }];
      case "edit": {
        const action = raw.edited_action ?? raw.editedAction;
        if (!isObject(action) || !isObject(action.args)) throw refusals.hitlEditShape(i);
        if (action.name !== undefined && action.name !== call.name) {
          throw refusals.hitlEditTool(i, call.name);
        }
        const changed = Object.fromEntries(Object.entries(action.args).filter(([k, v]) => !isDeepStrictEqual(v, call.args[k])));
        return [{ call_id: call.call_id, approved: true, ...(Object.keys(changed).length ? { edited_args: changed } : {}), ...version }];
      }
      default:
        throw refusals.hitlType(i);
    }
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
