/**
 * One decision sent through each face a person may use: tollgate's own `POST …/resume` (call
 * ids, `version`); LangGraph's run-centric API at `/langgraph` with `command.resume` as the HITL
 * middleware's positional `{decisions}` or as LangGraph's map keyed by the `__interrupt__` id; the
 * thread-centric protocol's `input.respond` command; a signed Slack click (or the reject modal);
 * a decide link from a request mail. Whatever the face, the answer is read back to one shape: a
 * run, a partial decision (waiting_human), or a refusal's code (and status, where the face has one).
 */
import { describeOutcome, type Outcome } from "./outcome.js";
import { prepareEmail, prepareSlack } from "./channel-faces.js";
import { type ChannelAction, sameDecision } from "./channel-model.js";
import { type BoundDecision, bindSpecs, type DecisionSpec, type MInterrupt, type Model, type MThread, type Prediction } from "./model.js";
import type { Who } from "./principals.js";
import type { Answer, GateSystem } from "./system.js";

export { describeOutcome, type Outcome };

export const API_FACES = ["tollgate", "lg-positional", "lg-map", "lg-respond"] as const;
export const CHANNEL_FACES = ["slack", "email"] as const;
export const FACES = [...API_FACES, ...CHANNEL_FACES] as const;
export type Face = (typeof FACES)[number];

/** What a face asks the gate, or why this person cannot say it there (no Slack user, no live link). */
export type Prepared =
  | { usable: false; why: string }
  | {
      usable: true;
      ds: BoundDecision[];
      /** A refusal of the face's own, before the gate is asked (a dead link). */
      before?: Prediction;
      send: () => Promise<Outcome>;
    };

/** What a decision is to be: a command's specs, one per call; or decisions bound already (the same decision on another face). */
export type Intent = { specs: readonly DecisionSpec[] } | { ds: readonly BoundDecision[] };

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

/** Sends `w`'s decisions on the thread's latest interrupt through one of the API faces. */
export async function sendDecision(sys: GateSystem, face: (typeof API_FACES)[number], w: Who, t: MThread, intr: MInterrupt, ds: readonly BoundDecision[]): Promise<Outcome> {
  const sse = "text/event-stream";
  if (face === "tollgate") return outcomeOf(await sys.request(w, "POST", `/threads/${t.id}/resume`, { interrupt_id: intr.id, decisions: ds.map(tollgateDecision) }, sse));
  const decisions = positional(intr, ds);
  if (face === "lg-respond") {
    const command = { id: 1, method: "input.respond", params: { interrupt_id: intr.lgId, response: { decisions } } };
    const out = commandOutcome(await sys.request(w, "POST", `/langgraph/threads/${t.id}/commands`, command));
    // The command answers once the run has started; the step is over when it has ended.
    if (out.kind === "run") await sys.settled(t.id);
    return out;
  }
  const resume = face === "lg-positional" ? { decisions } : { [intr.lgId]: { decisions } };
  return outcomeOf(await sys.request(w, "POST", `/langgraph/threads/${t.id}/runs/stream`, { assistant_id: "agent", command: { resume } }, sse));
}

/**
 * How `w` would say `intent` on `face` about the thread's latest interrupt. A channel face reads
 * what it shows from the message or mail the server sent, and says only what a channel can: the
 * command's first decision (not skipped) picks approve or reject, on the card as first shown or as
 * it now stands; the same decision bound elsewhere is said there only if a channel says exactly that.
 */
export async function prepareDecision(sys: GateSystem, face: Face, m: Model, w: Who, t: MThread, intr: MInterrupt, intent: Intent): Promise<Prepared> {
  if (face === "slack" || face === "email") {
    const prepare = face === "slack" ? prepareSlack : prepareEmail;
    if ("specs" in intent) return prepare(sys, m, w, t, intr, channelIntent(intent.specs));
    const action: ChannelAction = intent.ds.length && intent.ds.every((d) => d.kind === "reject") ? "reject" : "approve";
    let why = "a channel cannot say this decision";
    for (const blind of [false, true]) {
      const p = await prepare(sys, m, w, t, intr, { action, blind });
      if (!p.usable) why = p.why;
      else if (sameDecision(p.ds, intent.ds)) return p;
    }
    return { usable: false, why };
  }
  const ds = "specs" in intent ? bindSpecs(intr, intent.specs) : [...intent.ds];
  return { usable: true, ds, send: () => sendDecision(sys, face, w, t, intr, ds) };
}

/** What a channel face makes of a command's decisions: the first that is not a skip. */
export function channelIntent(specs: readonly DecisionSpec[]): { action: ChannelAction; blind: boolean } {
  const first = specs.find((s) => s.kind !== "skip");
  return { action: first?.kind === "reject" ? "reject" : "approve", blind: first?.blind ?? false };
}

function outcomeOf(a: Answer): Outcome {
  if (a.status === 200 && a.json === undefined) return { kind: "run" };
  if (a.status === 202 && a.json?.status === "waiting_human") return { kind: "waiting", waitingOn: a.json.waiting_on };
  return { kind: "refused", status: a.status, code: String(a.json?.error?.code ?? `(no code: ${a.text.slice(0, 200)})`) };
}

/** A protocol command's answer: success, or an error answer whose `tollgate.code` is the gate's; an HTTP refusal as elsewhere. */
function commandOutcome(a: Answer): Outcome {
  if (a.status !== 200) return outcomeOf(a);
  if (a.json?.type === "success") {
    const r = a.json.result ?? {};
    return r.status === "waiting_human" ? { kind: "waiting", waitingOn: r.waiting_on } : { kind: "run" };
  }
  return { kind: "refused", code: String(a.json?.tollgate?.code ?? `(no tollgate.code: ${a.text.slice(0, 200)})`) };
}
