import type { Principal } from "../../auth/index.js";
import { type Answer, closingOutcomes, type Decision, type DecisionVia, DEFAULT_REASON, NO_DECISION, refusals } from "../../protocol/index.js";
import {
  type CallEdit,
  checkVersions,
  decisionsFromProgress,
  decisionsOnShown,
  type GateDecision,
  hashArgs,
  refuseEditPastPolicy,
  refuseUndecidableInterrupt,
  refuseUnlessOpen,
  type ShownDecision,
  takesPartialDecisions,
  whyNotOpen,
} from "../../gate/index.js";
import { interruptPayload } from "./interrupt-payload.js";
import { realEdit } from "./kept-edits.js";
import { type AuditRecord, callRow, type InterruptCall, type InterruptRecord, type StoreOps, type ThreadRow } from "../../store/index.js";
import type { HitlDecision } from "../../graph/index.js";
import { enqueueApprovalWebhook } from "./approval-webhooks.js";
import type { PreparedEdits } from "../start/edit-check.js";
import type { ShownPreview } from "../start/previews.js";
import { takePartialDecisions } from "./partial-decisions.js";
import { ProgressConflict } from "./progress-conflict.js";
import type { DecisionReport } from "./report-decision.js";
import type { RunContext } from "../run-context.js";
import { seeThread } from "../threads/thread-access.js";
import type { FrameRequest } from "../stream/graph-frames.js";

/** A decision as the resume request carries it. */
export type ResumeDecision = Decision;

/** A resume as the run service takes it. */
export interface ResumeRequest {
  threadId: string;
  interruptId: string;
  /** Left out only for an interrupt that holds questions alone, or when `shown` stands instead. */
  decisions?: readonly ResumeDecision[];
  /**
   * Instead of `decisions`: a face's one choice on the calls it showed, at the versions it showed
   * (Slack, email). The gate makes it the decisions on the calls this principal decides now.
   */
  shown?: ShownDecision;
  /** One per question of the interrupt, when the graph asked any. */
  answers?: readonly Answer[];
  onDisconnect?: "cancel" | "continue";
  /** Chunks of the graph's own stream to record for live listeners, beside the events. */
  frames?: FrameRequest;
  /** The face the decision came through, for the audit (`api`, `langgraph`, `slack`, `email`). */
  via?: DecisionVia;
  /** The channel's own id of the person (Slack user id), for the audit. */
  channelUser?: string;
}

/** The audit rows of a person's decision, saying how it came. */
const stamped = (req: ResumeRequest, rows: AuditRecord[]): AuditRecord[] =>
  req.via ? rows.map((r) => ({ ...r, via: req.via, ...(req.channelUser ? { channel_user: req.channelUser } : {}) })) : rows;

/** What opening the gate needs: who resumes, with what, under which run. */
export interface GateOpening {
  p: Principal;
  req: ResumeRequest;
  edits: PreparedEdits;
  /** The resume's run, which holds the thread once the gate opens. */
  runId: string;
  now: number;
  /** The rate and concurrency limits: after 404 and 403, before 409/410/422. */
  admit?: () => void;
}

/**
 * Opens the gate for one resume, inside the caller's transaction `tx`: the caller may see the thread and decide
 * every call of its open interrupt; the interrupt is the open one, before its deadline; every
 * decision names a pending call and every edit was checked; then the interrupt leaves
 * `waiting_human`, the thread becomes `running` under `runId` (both compare-and-set), and the audit
 * trail gets one row per pending call. Returns the decisions bound to the hashes of the calls the
 * person was shown. Checks run in the contract's order: 404, 403, then 410/409/422, then the edits.
 */
export async function openGate(ctx: RunContext, tx: StoreOps, o: GateOpening): Promise<OpenedGate | WaitingGate> {
  const { p, req, edits, runId, now, admit = () => {} } = o;
  const { threadId, interruptId } = req;
  const answers = req.answers ?? [];
  const thread = await seeThread({ access: ctx.access, store: tx }, p, threadId);
  const open = thread.status === "waiting_human" && thread.open_interrupt_id ? await tx.interrupts.get(thread.open_interrupt_id) : undefined;
  const partial = open !== undefined && takesPartialDecisions(open);
  if (open?.status === "waiting_human") {
    refuseUndecidableInterrupt(ctx.access, { p, owner: thread.owner, requester: open.requester, calls: open.calls, partial });
    // The graph asked the person whose thread it is: only they (or an admin) answer. Call by call,
    // that binds only the decision that carries the answers.
    if (open.questions.length && !ctx.access.owns(p, thread.owner) && (!partial || answers.length)) throw refusals.onlyOwnerAnswers();
  }
  // A refused edit is a 400, and must not use up the caller's run budget.
  for (const d of req.decisions ?? []) {
    const checked = edits.interruptId === interruptId ? edits.byCall.get(d.call_id) : undefined;
    if (checked && "error" in checked) throw refusals.badEdit(checked.error);
  }
  admit();
  const named = await tx.interrupts.get(interruptId);
  refuseUnlessOpen({ thread, named: named?.thread_id === threadId ? named : undefined, open, interruptId, now });
  if (req.decisions === undefined && !req.shown && open!.calls.length) throw refusals.decisionsRequired();
  // A face's choice on what it showed: the calls this principal decides now, read from the
  // interrupt as this transaction sees it.
  const decisions = req.shown
    ? decisionsOnShown({ calls: open!.calls, progress: open!.progress, partial, owner: thread.owner, requester: open!.requester, p, deciders: ctx.access, shown: req.shown })
    : (req.decisions ?? []);
  const pending = new Map(open!.calls.map((c) => [c.call_id, c]));
  const seen = new Set<string>();
  for (const d of decisions) {
    if (seen.has(d.call_id)) throw refusals.twoDecisions(d.call_id);
    seen.add(d.call_id);
    if (!pending.has(d.call_id)) throw refusals.unknownCall(d.call_id);
  }
  checkVersions(decisions, pending, (call) => ctx.redactor.interrupt(interruptPayload({ ...open!, calls: [call as InterruptCall] })).calls[0]);
  if (partial) return takePartial(ctx, tx, { p, req, decisions, open: open!, thread, runId, now, edits });
  const bound = decisions.map((d) => bind(d, pending.get(d.call_id)!, { edits, interruptId }));
  for (const b of bound) {
    if (!b.edit) continue;
    const call = pending.get(b.decision.call_id)!;
    refuseEditPastPolicy(ctx.access, { p, owner: thread.owner, requester: open!.requester, call, edited: ctx.registry.policyOf(call.name, b.edit.args) });
  }
  const rows = stamped(req, auditRows(ctx, open!, { bound, p, now }));
  await tx.audit.append(rows);
  return resumeGate(ctx, tx, { p, open: open!, thread, bound, rows, answers, runId, now, via: req.via });
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
  o: { p: Principal; req: ResumeRequest; decisions: readonly Decision[]; open: InterruptRecord; thread: ThreadRow; runId: string; now: number; edits: PreparedEdits },
): Promise<OpenedGate | WaitingGate> {
  const { p, req, open, thread, now } = o;
  const answers = req.answers ?? [];
  const step = takePartialDecisions(ctx, { open, owner: thread.owner, p, decisions: o.decisions, edits: o.edits, now });
  if (step.waitingOn.length && answers.length) throw refusals.answersTooEarly();
  if (!(await tx.interrupts.recordProgress(open.interrupt_id, { seenSeq: open.progress_seq, progress: step.progress, before: now }))) {
    throw whyNotOpen(await tx.interrupts.get(open.interrupt_id), now) ?? new ProgressConflict();
  }
  await tx.audit.append(stamped(req, step.rows));
  const report: DecisionReport = { threadId: thread.thread_id, interruptId: open.interrupt_id, principal: p.sub, calls: step.rows, openedAt: open.created_at, decidedAt: now, partial: true, via: req.via };
  if (step.waitingOn.length) {
    // The calls as they now stand (an edit changes what they show), read back in this transaction.
    const now_ = (await tx.interrupts.get(open.interrupt_id)) ?? { ...open, progress: step.progress };
    await enqueueApprovalWebhook(ctx, tx, {
      record: now_,
      type: "approval.decided",
      at: now,
      decided_by: p.sub,
      decisions: step.rows.map((r) => ({ call_id: r.call_id, decision: r.decision })),
      partial: true,
    });
    return { waiting_on: step.waitingOn, report };
  }
  const pending = new Map(open.calls.map((c) => [c.call_id, c]));
  // Bound to what the approvers saw: an edited call to the preview on the card its editor edited.
  const bound = decisionsFromProgress(open.calls, { progress: step.progress, realEdit: (e) => realEdit(ctx, e) }).map((d) =>
    bind(d, pending.get(d.call_id)!, { edits: o.edits, interruptId: open.interrupt_id, stored: step.progress[d.call_id]?.edit }),
  );
  return resumeGate(ctx, tx, { ...o, open: { ...open, progress: step.progress }, bound, rows: step.rows, answers, via: req.via });
}

/**
 * The interrupt is decided: it leaves `waiting_human` and the thread is `runId`'s (both
 * compare-and-set), the decision's webhook goes out with the commit.
 */
async function resumeGate(
  ctx: RunContext,
  tx: StoreOps,
  o: { p: Principal; open: InterruptRecord; thread: ThreadRow; bound: Bound[]; rows: AuditRecord[]; answers: readonly Answer[]; runId: string; now: number; via?: DecisionVia },
): Promise<OpenedGate> {
  const { p, open, thread, bound, rows, answers, runId, now, via } = o;
  const { interrupt_id: interruptId, thread_id: threadId } = open;
  const resumeValues = { ...answersFor(open, answers), ...hitlResumes(open, bound) };
  const gate = bound.map((b) => b.decision);
  const to = gate.some((d) => d.approved) || answers.length ? "resumed" : "rejected";
  // Compare-and-set, the deadline included: a read above may be stale on a shared database.
  // The record keeps the decisions as people see them: an edit's sensitive values masked (the
  // run carries the real ones; only checkpoints and the ledger keep them).
  const kept = gate.map((d) => (d.edited_args ? { ...d, edited_args: ctx.registry.mask(d.name ?? "", d.edited_args) } : d));
  if (!(await tx.interrupts.transition(interruptId, to, { decisions: kept, before: now }))) {
    throw whyNotOpen(await tx.interrupts.get(interruptId), now) ?? refusals.alreadyClosed();
  }
  if (!(await tx.threads.claimWaiting(threadId, runId, true))) throw refusals.threadBusy();
  await enqueueApprovalWebhook(ctx, tx, {
    record: open,
    type: "approval.decided",
    at: now,
    decided_by: p.sub,
    decisions: rows.map((r) => ({ call_id: r.call_id, decision: r.decision })),
  });
  const report: DecisionReport = { threadId, interruptId, principal: p.sub, calls: rows, openedAt: open.created_at, decidedAt: now, partial: takesPartialDecisions(open), via };
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
    if (!asked.has(a.question_id)) throw refusals.questionNotAsked(a.question_id);
    values[a.question_id] = a.value;
  }
  const missing = open.questions.find((q) => !(q.question_id in values));
  if (missing) throw refusals.questionUnanswered(missing.question_id);
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
    else decision = { type: "reject", message: closingOutcomes.rejected(d?.reason ?? (d ? DEFAULT_REASON : NO_DECISION)).error! };
    if (!allowed.includes(decision.type)) {
      throw refusals.middlewareAllows(call.call_id, allowed);
    }
    (out[call.hitl.interrupt_id] ??= { decisions: [] }).decisions.push(decision);
  }
  return out;
}

/**
 * A decision tied to the call the person was shown, with its checked edit (one that changes
 * nothing is a plain approval). An approval is bound to the preview its approver was shown: with
 * an edit, the one on the card edited (`stored`, for an edit taken earlier), never the preview
 * the edit took again, which nobody approving had seen.
 */
function bind(d: ResumeDecision, call: InterruptCall, o: { edits: PreparedEdits; interruptId: string; stored?: CallEdit }): Bound {
  const { edits, interruptId, stored } = o;
  const shown = stored && "bound_preview" in stored ? { preview: stored.bound_preview } : call.preview !== undefined ? { preview: call.preview } : {};
  const decision: GateDecision = {
    call_id: d.call_id,
    approved: d.approved,
    reason: d.reason,
    name: call.name,
    args_hash: call.args_hash,
    run_args_hash: call.args_hash,
    // What the person saw: the tool gets it back to check it still holds.
    ...shown,
  };
  if (d.edited_args === undefined) return { decision };
  const edit = edits.interruptId === interruptId ? edits.byCall.get(d.call_id) : undefined;
  // Checked against another interrupt (it changed under us): the caller retries. A refused edit
  // was answered 400 before the run budget was touched (see `openGate`).
  if (!edit || "error" in edit) throw refusals.editCheckedElsewhere();
  if (!edit.changed.length) return { decision };
  return { decision: { ...decision, edited_args: d.edited_args, run_args_hash: hashArgs(edit.args), edited: edit.changed }, edit };
}

/** One immutable row per pending call: how it was decided, by whom, with keyed hashes of its arguments. */
function auditRows(ctx: RunContext, open: InterruptRecord, o: { bound: Bound[]; p: Principal; now: number }): AuditRecord[] {
  const { bound, p, now } = o;
  const byCall = new Map(bound.map((b) => [b.decision.call_id, b]));
  return open.calls.map((call): AuditRecord => {
    const b = byCall.get(call.call_id);
    const d = b?.decision;
    const row = callRow(open, call, { by: p.sub, at: now });
    if (!b || !d) return { ...row, decision: "no_decision", reason: NO_DECISION };
    if (!d.approved) return { ...row, decision: "rejected", reason: d.reason ?? DEFAULT_REASON };
    if (b.edit) {
      // The preview hash stays the one the editor was shown: that is what the approval is bound to.
      const { args } = b.edit;
      return { ...row, decision: "edited", reason: d.reason ?? null, edited_args_hash: ctx.store.audit.hash(args), run_args_hash: hashArgs(args) };
    }
    return { ...row, decision: "approved", reason: d.reason ?? null, run_args_hash: call.args_hash };
  });
}
