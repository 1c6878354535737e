import type { Principal } from "../auth/index.js";
import { type Answer, AppError, type Decision } from "../protocol/index.js";
import { type AuditRecord, callRow, type InterruptCall, type InterruptRecord, type StoreOps, type ThreadRow } from "../store/index.js";
import type { HitlDecision } from "../graph/index.js";
import { closingOutcomes, type GateDecision, hashArgs } from "../tools/index.js";
import { enqueueApprovalWebhook } from "./approval-webhooks.js";
import type { PreparedEdits } from "./edit-check.js";
import type { ShownPreview } from "./previews.js";
import { decisionsFromProgress, takePartialDecisions, takesPartialDecisions } from "./partial-decisions.js";
import { ProgressConflict } from "./progress-conflict.js";
import type { DecisionReport } from "./report-decision.js";
import type { RunContext } from "./run-context.js";
import { seeThread } from "./thread-access.js";
import type { FrameRequest } from "./graph-frames.js";

/** A decision as the resume request carries it. */
export type ResumeDecision = Decision;

/** A resume as the run service takes it. */
export interface ResumeRequest {
  threadId: string;
  interruptId: string;
  decisions: readonly ResumeDecision[];
  /** One per question of the interrupt, when the graph asked any. */
  answers?: readonly Answer[];
  onDisconnect?: "cancel" | "continue";
  /** Chunks of the graph's own stream to record for live listeners, beside the events. */
  frames?: FrameRequest;
}

/** What opening the gate needs besides the request. */
export interface GateOpening {
  edits: PreparedEdits;
  /** The resume's run, which holds the thread once the gate opens. */
  runId: string;
  now: number;
  /** The rate and concurrency limits: after 404 and 403, before 409/410/422. */
  admit?: () => void;
}

const DEFAULT_REASON = "User denied";

/**
 * Opens the gate for one resume, inside the caller's transaction `tx`: the caller may see the thread and decide
 * every call of its open interrupt; the interrupt is the open one, before its deadline; every
 * decision names a pending call and every edit was checked; then the interrupt leaves
 * `waiting_human`, the thread becomes `running` under `runId` (both compare-and-set), and the audit
 * trail gets one row per pending call. Returns the decisions bound to the hashes of the calls the
 * person was shown. Checks run in the contract's order: 404, 403, then 410/409/422, then the edits.
 */
export async function openGate(ctx: RunContext, tx: StoreOps, p: Principal, req: ResumeRequest, o: GateOpening): Promise<OpenedGate | WaitingGate> {
  const { threadId, interruptId, decisions } = req;
  const answers = req.answers ?? [];
  const { edits, runId, now, admit = () => {} } = o;
  const thread = await seeThread(ctx, p, threadId, tx);
  const open = thread.status === "waiting_human" && thread.open_interrupt_id ? await tx.interrupts.get(thread.open_interrupt_id) : undefined;
  if (open?.status === "waiting_human" && !ctx.access.mayDecideWaiting(p, thread.owner, open.calls, open.requester, takesPartialDecisions(open))) {
    throw new AppError("forbidden", forbiddenWhy(open, p, thread.owner));
  }
  const partial = open !== undefined && takesPartialDecisions(open);
  // The graph asked the person whose thread it is: only they (or an admin) answer. Call by call,
  // that binds only the decision that carries the answers.
  if (open?.status === "waiting_human" && open.questions.length && !ctx.access.owns(p, thread.owner) && (!partial || answers.length)) {
    throw new AppError("forbidden", "Only the thread's owner may answer the questions of this interrupt");
  }
  // A refused edit is a 400, and must not use up the caller's run budget.
  for (const d of decisions) {
    const checked = edits.interruptId === interruptId ? edits.byCall.get(d.call_id) : undefined;
    if (checked && "error" in checked) throw new AppError("invalid_request", checked.error);
  }
  admit();
  const named = await tx.interrupts.get(interruptId);
  if (named && named.thread_id === threadId) {
    const past = named.status === "expired" || (named.status === "waiting_human" && now >= named.expires_at);
    if (past) throw new AppError("approval_expired", `Approval window closed at ${new Date(named.expires_at).toISOString()}`);
  }
  if (thread.status === "running") throw new AppError("thread_busy", "A run is already in flight on this thread");
  if (!open || open.status !== "waiting_human") throw new AppError("not_waiting", "This thread has no open interrupt");
  // Never echo the open interrupt's id: the stale one's owner can read it from GET if allowed.
  if (open.interrupt_id !== interruptId) throw new AppError("stale_interrupt", "interrupt_id is not this thread's open interrupt");
  const pending = new Map(open.calls.map((c) => [c.call_id, c]));
  const seen = new Set<string>();
  for (const d of decisions) {
    if (seen.has(d.call_id)) throw new AppError("invalid_request", `Two decisions name call ${clip(d.call_id)}`);
    seen.add(d.call_id);
    if (!pending.has(d.call_id)) throw new AppError("unknown_call", `Call ${clip(d.call_id)} is not pending in this interrupt`);
  }
  if (partial) return takePartial(ctx, tx, { p, req, open, thread, runId, now, edits });
  const bound = decisions.map((d) => bind(d, pending.get(d.call_id)!, edits, interruptId));
  for (const b of bound) if (b.edit) refuseEditPastPolicy(ctx, { p, owner: thread.owner, requester: open.requester, call: pending.get(b.decision.call_id)!, args: b.edit.args });
  const rows = auditRows(ctx, open, bound, p, now);
  await tx.audit.append(rows);
  return resumeGate(ctx, tx, { p, open, thread, bound, rows, answers, runId, now });
}

/**
 * Decisions call by call on an interrupt that holds a quorum call: applied to its progress by
 * compare-and-set (`ProgressConflict` when another decision landed since it was read: retry), each an
 * audit row. While calls still wait, a `partial` webhook and no run; the decision that closes the
 * last one opens the gate as a whole decision would.
 */
async function takePartial(
  ctx: RunContext,
  tx: StoreOps,
  o: { p: Principal; req: ResumeRequest; open: InterruptRecord; thread: ThreadRow; runId: string; now: number; edits: PreparedEdits },
): Promise<OpenedGate | WaitingGate> {
  const { p, req, open, thread, now } = o;
  const answers = req.answers ?? [];
  const step = takePartialDecisions(ctx, { open, owner: thread.owner, p, decisions: req.decisions, edits: o.edits, now });
  if (step.waitingOn.length && answers.length) throw new AppError("invalid_request", "Answers go with the decision that closes the interrupt's last open call");
  if (!(await tx.interrupts.recordProgress(open.interrupt_id, open.progress_seq, step.progress, now))) {
    const again = await tx.interrupts.get(open.interrupt_id);
    if (again?.status === "expired" || (again?.status === "waiting_human" && now >= again.expires_at)) {
      throw new AppError("approval_expired", `Approval window closed at ${new Date(again.expires_at).toISOString()}`);
    }
    if (again?.status !== "waiting_human") throw new AppError("not_waiting", "This interrupt was already decided");
    throw new ProgressConflict();
  }
  await tx.audit.append(step.rows);
  const report: DecisionReport = { threadId: thread.thread_id, interruptId: open.interrupt_id, principal: p.sub, calls: step.rows, openedAt: open.created_at, decidedAt: now, partial: true };
  if (step.waitingOn.length) {
    // The calls as they now stand (an edit changes what they show), read back in this transaction.
    const now_ = (await tx.interrupts.get(open.interrupt_id)) ?? { ...open, progress: step.progress };
    await enqueueApprovalWebhook(ctx, tx, now_, "approval.decided", now, {
      decided_by: p.sub,
      decisions: step.rows.map((r) => ({ call_id: r.call_id, decision: r.decision })),
      partial: true,
    });
    return { waiting_on: step.waitingOn, report };
  }
  const pending = new Map(open.calls.map((c) => [c.call_id, c]));
  // Bound to what the approvers saw: an edited call's preview as it was shown with the edit.
  const bound = decisionsFromProgress(open, step.progress).map((d) => {
    const b = bind(d, pending.get(d.call_id)!, o.edits, open.interrupt_id);
    const seen = step.progress[d.call_id]?.edit;
    return seen && b.decision.approved ? { ...b, decision: { ...b.decision, preview: seen.preview } } : b;
  });
  return resumeGate(ctx, tx, { ...o, open: { ...open, progress: step.progress }, bound, rows: step.rows, answers });
}

/**
 * The interrupt is decided: it leaves `waiting_human` and the thread is `runId`'s (both
 * compare-and-set), the decision's webhook goes out with the commit.
 */
async function resumeGate(
  ctx: RunContext,
  tx: StoreOps,
  o: { p: Principal; open: InterruptRecord; thread: ThreadRow; bound: Bound[]; rows: AuditRecord[]; answers: readonly Answer[]; runId: string; now: number },
): Promise<OpenedGate> {
  const { p, open, thread, bound, rows, answers, runId, now } = o;
  const { interrupt_id: interruptId, thread_id: threadId } = open;
  const resumeValues = { ...answersFor(open, answers), ...hitlResumes(open, bound) };
  const gate = bound.map((b) => b.decision);
  const to = gate.some((d) => d.approved) || answers.length ? "resumed" : "rejected";
  // Compare-and-set, the deadline included: a read above may be stale on a shared database.
  if (!(await tx.interrupts.transition(interruptId, to, gate, now))) {
    const again = await tx.interrupts.get(interruptId);
    if (again?.status === "expired" || (again?.status === "waiting_human" && now >= again.expires_at)) {
      throw new AppError("approval_expired", `Approval window closed at ${new Date(again.expires_at).toISOString()}`);
    }
    throw new AppError("not_waiting", "This interrupt was already decided");
  }
  if (!(await tx.threads.claimWaiting(threadId, runId, true))) throw new AppError("thread_busy", "A run is already in flight on this thread");
  await enqueueApprovalWebhook(ctx, tx, open, "approval.decided", now, {
    decided_by: p.sub,
    decisions: rows.map((r) => ({ call_id: r.call_id, decision: r.decision })),
  });
  const report: DecisionReport = { threadId, interruptId, principal: p.sub, calls: rows, openedAt: open.created_at, decidedAt: now, partial: takesPartialDecisions(open) };
  return { decisions: gate, resumeValues, callIds: open.calls.map((c) => c.call_id), graphId: thread.graph_id, requester: open.requester ?? thread.owner, report };
}

/** Decisions taken on single calls while others still wait: no run starts. */
export interface WaitingGate {
  /** The calls still open. */
  waiting_on: string[];
  report: DecisionReport;
}

export { ProgressConflict } from "./progress-conflict.js";

/** The decisions bound for the graph, and whose message the continuation still answers. */
export interface OpenedGate {
  /** Bound to the calls as shown: tool name, argument hashes before and after any edit. */
  decisions: GateDecision[];
  /** What the graph's own interrupts resume with, by LangGraph interrupt id (the answers). */
  resumeValues: Record<string, unknown>;
  /** Every call of the interrupt (one without a decision is not approved). */
  callIds: string[];
  /** The thread's graph. */
  graphId: string;
  requester: string;
  /** For the log and metrics, once the transaction has committed. */
  report: DecisionReport;
}

interface Bound {
  decision: GateDecision;
  /** The checked edit, when it changes something. */
  edit?: { args: Record<string, unknown>; changed: string[]; preview?: ShownPreview };
}

/** The answers by question id; every question answered, no other (else 400, nothing decided). */
function answersFor(open: InterruptRecord, answers: readonly Answer[]): Record<string, unknown> {
  const asked = new Set(open.questions.map((q) => q.question_id));
  const values: Record<string, unknown> = {};
  for (const a of answers) {
    if (!asked.has(a.question_id)) throw new AppError("invalid_request", `Question ${clip(a.question_id)} is not asked in this interrupt`);
    values[a.question_id] = a.value;
  }
  const missing = open.questions.find((q) => !(q.question_id in values));
  if (missing) throw new AppError("invalid_request", `Question ${clip(missing.question_id)} needs an answer (answers: [{question_id, value}])`);
  return values;
}

/**
 * What each LangChain HITL middleware interrupt resumes with: one decision per call, in its order.
 * An approval is `approve` (`edit` with the merged arguments when the person edited). A rejection,
 * or no decision, is sent as `approve` too, and the tool refuses it itself with the person's
 * reason: LangChain's JS middleware answers any `reject` by dropping the whole batch (approved
 * calls never run, read calls left unanswered), which would break "approved calls run once".
 * Only where the middleware allows no `approve` is a `reject` sent.
 */
function hitlResumes(open: InterruptRecord, bound: readonly Bound[]): Record<string, { decisions: HitlDecision[] }> {
  const byCall = new Map(bound.map((b) => [b.decision.call_id, b]));
  const out: Record<string, { decisions: HitlDecision[] }> = {};
  for (const call of open.calls) {
    if (!call.hitl) continue;
    const b = byCall.get(call.call_id);
    const d = b?.decision;
    const allowed = call.hitl.allowed;
    let decision: HitlDecision;
    if (d?.approved && b?.edit) decision = { type: "edit", editedAction: { name: call.name, args: b.edit.args } };
    else if (d?.approved || allowed.includes("approve")) decision = { type: "approve" };
    else decision = { type: "reject", message: closingOutcomes.rejected(d?.reason ?? (d ? DEFAULT_REASON : "no decision")).error! };
    if (!allowed.includes(decision.type)) {
      throw new AppError("invalid_request", `Call ${clip(call.call_id)}: the graph's middleware allows only ${allowed.join(", ")}`);
    }
    (out[call.hitl.interrupt_id] ??= { decisions: [] }).decisions.push(decision);
  }
  return out;
}

/** A decision tied to the call the person was shown, with its checked edit (one that changes nothing is a plain approval). */
function bind(d: ResumeDecision, call: InterruptCall, edits: PreparedEdits, interruptId: string): Bound {
  const decision: GateDecision = {
    call_id: d.call_id,
    approved: d.approved,
    reason: d.reason,
    name: call.name,
    args_hash: call.args_hash,
    run_args_hash: call.args_hash,
    // What the person saw: the tool gets it back to check it still holds.
    ...(call.preview !== undefined ? { preview: call.preview } : {}),
  };
  if (d.edited_args === undefined) return { decision };
  const edit = edits.interruptId === interruptId ? edits.byCall.get(d.call_id) : undefined;
  // Checked against another interrupt (it changed under us): the caller retries. A refused edit
  // was answered 400 before the run budget was touched (see `openGate`).
  if (!edit || "error" in edit) throw new AppError("thread_busy", "The interrupt changed while the edit was checked; try again");
  if (!edit.changed.length) return { decision };
  // What the edited call would do, taken again on its new arguments (absent: the tool has no preview).
  const seen = edit.preview?.preview !== undefined ? { preview: edit.preview.preview } : {};
  const { preview: _old, ...rest } = decision;
  return { decision: { ...rest, ...seen, edited_args: d.edited_args, run_args_hash: hashArgs(edit.args), edited: edit.changed }, edit };
}

/** One immutable row per pending call: how it was decided, by whom, with keyed hashes of its arguments. */
function auditRows(ctx: RunContext, open: InterruptRecord, bound: Bound[], p: Principal, now: number): AuditRecord[] {
  const byCall = new Map(bound.map((b) => [b.decision.call_id, b]));
  return open.calls.map((call): AuditRecord => {
    const b = byCall.get(call.call_id);
    const d = b?.decision;
    const row = callRow(open, call, p.sub, now);
    if (!b || !d) return { ...row, decision: "no_decision", reason: "no decision" };
    if (!d.approved) return { ...row, decision: "rejected", reason: d.reason ?? DEFAULT_REASON };
    if (b.edit) {
      const { args } = b.edit;
      const { preview_hash: _shown, ...asShown } = row;
      const seen = b.edit.preview?.preview_hash ? { preview_hash: b.edit.preview.preview_hash } : {};
      return { ...asShown, ...seen, decision: "edited", reason: d.reason ?? null, edited_args_hash: ctx.store.audit.hash(args), run_args_hash: hashArgs(args) };
    }
    return { ...row, decision: "approved", reason: d.reason ?? null, run_args_hash: call.args_hash };
  });
}

/**
 * An edit re-resolves the call's policy on the new arguments (a rule may answer otherwise): the
 * editor must be allowed under both, and an edit that would need a quorum is refused (it is
 * decided call by call: reject, and ask for the call again). `403`, nothing decided.
 */
function refuseEditPastPolicy(ctx: RunContext, o: { p: Principal; owner: string; requester: string | null; call: InterruptCall; args: Record<string, unknown> }): void {
  const now = ctx.registry.policyOf(o.call.name, o.args);
  if (now.policy === o.call.policy && now.requires === undefined) return;
  if (now.policy === "quorum") {
    throw new AppError("forbidden", `With these edits call ${clip(o.call.call_id)} would need ${now.requires!.approvers} of ${now.requires!.role}: reject it, and ask for it again`);
  }
  if (!ctx.access.mayDecide(o.p, o.owner, now, o.requester)) {
    throw new AppError("forbidden", `With these edits call ${clip(o.call.call_id)} would need ${now.policy === "approver" ? "an approver other than its owner or requester" : "its owner or an approver"}`);
  }
}

function forbiddenWhy(open: InterruptRecord, p: Principal, owner: string): string {
  const fourEyes = open.calls.some((c) => c.policy === "approver");
  return fourEyes && (p.sub === owner || p.sub === open.requester)
    ? "Four eyes: a call here needs an approver other than the one who asked for it; the owner may cancel"
    : "You may not decide every call of this interrupt";
}

/** Ids from the request are echoed at most this long. */
const clip = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);
