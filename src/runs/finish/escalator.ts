import { isStorageFault } from "../../store/index.js";
import { enqueueApprovalWebhook } from "../decide/approval-webhooks.js";
import type { RunContext } from "../run-context.js";

/**
 * Escalates every open interrupt whose escalation time has come: once each, across replicas (a
 * compare-and-set marks it), with its `approval.escalated` webhook in the same transaction.
 * Returns how many it escalated; a database that cannot be reached defers them to the next sweep.
 */
export async function escalateDue(ctx: RunContext): Promise<number> {
  const now = ctx.clock.now();
  let due;
  try {
    due = await ctx.store.interrupts.listDueEscalations(now);
  } catch (err) {
    if (!isStorageFault(err)) throw err;
    return 0;
  }
  let escalated = 0;
  for (const r of due) {
    try {
      const marked = await ctx.store.transaction(async (tx) => {
        if (!(await tx.interrupts.markEscalated(r.interrupt_id, now))) return false;
        const waitingOn = r.calls.filter((c) => !r.progress[c.call_id]?.closed).map((c) => c.call_id);
        await enqueueApprovalWebhook(ctx, tx, { record: r, type: "approval.escalated", at: now, waiting_on: waitingOn });
        return true;
      });
      if (!marked) continue;
      escalated++;
      ctx.metrics.escalated();
      ctx.log.info("approval escalated", { thread_id: r.thread_id, interrupt_id: r.interrupt_id });
    } catch (err) {
      if (isStorageFault(err)) ctx.log.warn("escalation deferred: database unavailable", { thread_id: r.thread_id, interrupt_id: r.interrupt_id });
      else ctx.log.error("escalation failed", { thread_id: r.thread_id, interrupt_id: r.interrupt_id, err });
    }
  }
  return escalated;
}
