/**
 * One decision sent through each face a client may use: tollgate's own `POST …/resume` (call ids,
 * `version`), and LangGraph's run-centric API at `/langgraph` with `command.resume` as the HITL
 * middleware's positional `{decisions}` or as LangGraph's map keyed by the `__interrupt__` id.
 * Whatever the face, the answer is read the same way: a run (streamed to its end), a partial
 * decision (202 waiting_human), or a refusal (status and code).
 */
import type { BoundDecision, MInterrupt, MThread } from "./model.js";
import type { Who } from "./principals.js";
import type { Answer, GateSystem } from "./system.js";

export const FACES = ["tollgate", "lg-positional", "lg-map"] as const;
export type Face = (typeof FACES)[number];

export type Outcome = { kind: "run" } | { kind: "waiting"; waitingOn: string[] } | { kind: "refused"; status: number; code: string };

/** The arguments as people see them: the demo masks an email's recipient and body. */
function shown(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  return tool === "send_email" ? { ...args, to: "***", body: "***" } : args;
}

/** Tollgate's own decision shape. */
function tollgateDecision(d: BoundDecision) {
  return {
    call_id: d.call.id,
    approved: d.kind !== "reject",
    ...(d.kind === "reject" ? { reason: "not this one" } : {}),
    ...(d.edited ? { edited_args: d.edited } : {}),
    ...(d.version !== undefined ? { version: d.version } : {}),
  };
}

/**
 * The HITL middleware's decisions by position in `action_requests`: `null` passes over a call (in
 * an interrupt decided as a whole it is then rejected, as a call tollgate's face leaves out). An
 * edit sends the whole arguments as the person was shown them, with the keys they changed.
 */
function positional(intr: MInterrupt, ds: readonly BoundDecision[]) {
  const byCall = new Map(ds.map((d) => [d.call.id, d]));
  const last = Math.max(-1, ...intr.calls.map((c, i) => (byCall.has(c.id) ? i : -1)));
  return intr.calls.slice(0, last + 1).map((call) => {
    const d = byCall.get(call.id);
    if (!d) return null;
    const version = d.version !== undefined ? { version: d.version } : {};
    if (d.kind === "reject") return { type: "reject", message: "not this one" };
    if (d.kind === "approve") return { type: "approve", ...version };
    const seen = call.versions[d.seen - 1]!.args;
    return { type: "edit", edited_action: { name: call.tool, args: { ...shown(call.tool, seen), ...d.edited } }, ...version };
  });
}

/** Sends `w`'s decisions on the thread's latest interrupt through `face`. */
export async function sendDecision(sys: GateSystem, face: Face, w: Who, t: MThread, intr: MInterrupt, ds: readonly BoundDecision[]): Promise<Outcome> {
  let answer: Answer;
  const sse = "text/event-stream";
  if (face === "tollgate") {
    answer = await sys.request(w, "POST", `/threads/${t.id}/resume`, { interrupt_id: intr.id, decisions: ds.map(tollgateDecision) }, sse);
  } else {
    const decisions = positional(intr, ds);
    const resume = face === "lg-positional" ? { decisions } : { [intr.lgId]: { decisions } };
    answer = await sys.request(w, "POST", `/langgraph/threads/${t.id}/runs/stream`, { assistant_id: "agent", command: { resume } }, sse);
  }
  return outcomeOf(answer);
}

function outcomeOf(a: Answer): Outcome {
  if (a.status === 200 && a.json === undefined) return { kind: "run" };
  if (a.status === 202 && a.json?.status === "waiting_human") return { kind: "waiting", waitingOn: a.json.waiting_on };
  return { kind: "refused", status: a.status, code: String(a.json?.error?.code ?? `(no code: ${a.text.slice(0, 200)})`) };
}

export const describeOutcome = (o: Outcome | { kind: "refused"; status: number; code: string }): string =>
  o.kind === "refused" ? `${o.status} ${o.code}` : o.kind === "waiting" ? `202 waiting_human on [${o.waitingOn.join(", ")}]` : "a run";
