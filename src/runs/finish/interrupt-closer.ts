import { randomUUID } from "node:crypto";
import { closePendingCalls, closingOutcomes } from "../../graph/index.js";
import type { RunContext } from "../run-context.js";
import { graphOfThread } from "../threads/thread-graph.js";
import { enqueueApprovalWebhook } from "../decide/approval-webhooks.js";
import { type DecisionReport, reportDecision } from "../decide/report-decision.js";

class LostRace extends Error {}

/** The tool message each pending call gets when its interrupt is closed this way. */
export const closingOutcome = (to: "expired" | "cancelled") =>
  to === "expired" ? closingOutcomes.expired() : closingOutcomes.cancelled();

const CLOSER_PREFIX = "close-";

/** A closer holds the thread under an id that names what it was doing, for crash recovery. */
function closerHolderId(to: "expired" | "cancelled"): string {
  return `${CLOSER_PREFIX}${to}-${randomUUID()}`;
}

/** What a closer that died while holding the thread was doing; undefined for a run's id. */
export function closerTarget(holderId: string): "expired" | "cancelled" | undefined {
  if (holderId.startsWith(`${CLOSER_PREFIX}expired-`)) return "expired";
  if (holderId.startsWith(`${CLOSER_PREFIX}cancelled-`)) return "cancelled";
  return undefined;
}

/** Which interrupt to close, how, and on whose word. */
export interface InterruptClosing {
  threadId: string;
  interruptId: string;
  to: "expired" | "cancelled";
  /** Who cancelled; null or not given: the system (expiry). */
  by?: string | null;
}

/**
 * Closes an open interrupt without running anything (cancel or expiry): the interrupt leaves
 * `waiting_human`, the thread is held (both compare-and-set) and each pending call gets its audit
 * row, in one transaction; then each pending call gets its closing tool message and the thread
 * goes idle. No model call is made.
 * Returns false when someone else (a resume, another closer) got there first.
 */
export async function closeInterrupt(ctx: RunContext, o: InterruptClosing): Promise<boolean> {
  const holder = closerHolderId(o.to);
  ctx.inFlight.closing.add(holder);
  try {
    return await close(ctx, { ...o, holder });
  } finally {
    ctx.inFlight.closing.delete(holder);
  }
}

/** `holder`: the closer's id, which holds the thread while the calls are answered. */
async function close(ctx: RunContext, o: InterruptClosing & { holder: string }): Promise<boolean> {
  const { threadId, interruptId, to, holder, by = null } = o;
  let report: DecisionReport;
  try {
    report = await ctx.store.transaction(async (tx) => {
      if (!(await tx.interrupts.transition(interruptId, to))) throw new LostRace();
      if (!(await tx.threads.claimWaiting(threadId, holder, false))) throw new LostRace(); // rolls back the first
      const reason = to === "expired" ? "approval window closed" : "cancelled";
      const record = (await tx.interrupts.get(interruptId))!;
      const at = ctx.clock.now();
      await tx.audit.appendForEachCall(record, { decision: to, by, reason }, at);
      await enqueueApprovalWebhook(ctx, tx, { record, type: `approval.${to}`, at, ...(by ? { decided_by: by } : {}) });
      const calls = record.calls.map((c) => ({ call_id: c.call_id, tool: c.name, decision: to }));
      return { threadId, interruptId, principal: by, calls, openedAt: record.created_at, decidedAt: at };
    });
  } catch (err) {
    if (err instanceof LostRace) return false;
    throw err;
  }
  reportDecision(ctx, report);
  try {
    await closePendingCalls(await graphOfThread(ctx, threadId), { ledger: ctx.store.ledger, threadId, fallback: closingOutcome(to) });
    await ctx.store.threads.release(threadId, holder, { to: "idle", lastOutcome: to });
  } catch (err) {
    // The thread stays held: released now it would sit idle over unanswered calls. The settler
    // finishes the close once the database takes writes again; the caller hears it failed.
    await ctx.settler.adopt({ threadId, holderId: holder, fallback: closingOutcome(to) });
    if (ctx.settler.holds(threadId)) throw err;
  }
  return true;
}
