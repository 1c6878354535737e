import type { GateDecision } from "../../graphs/decisions.js";
import { AppError, type Decision } from "../protocol/index.js";
import type { Store } from "../store/index.js";

/** A decision as the resume request carries it. */
export type ResumeDecision = Decision;

/**
 * Opens the gate for one resume, in one transaction: the thread exists, the interrupt is its open
 * one, it is still before the deadline, every decision names a pending call; then the interrupt
 * leaves `waiting_human` and the thread becomes `running` under `runId`, both compare-and-set.
 * Returns the decisions bound to the hashes of the calls the person was shown.
 */
export function openGate(
  store: Store,
  threadId: string,
  interruptId: string,
  decisions: readonly ResumeDecision[],
  runId: string,
  now: number,
): GateDecision[] {
  return store.db.transaction((): GateDecision[] => {
    const thread = store.threads.get(threadId);
    if (!thread) throw new AppError("thread_not_found", `Thread ${threadId} not found`);
    const named = store.interrupts.get(interruptId);
    if (named && named.thread_id === threadId) {
      const past = named.status === "expired" || (named.status === "waiting_human" && now >= named.expires_at);
      if (past) throw new AppError("approval_expired", `Approval window closed at ${new Date(named.expires_at).toISOString()}`);
    }
    if (thread.status === "running") throw new AppError("thread_busy", "A run is already in flight on this thread");
    const open = thread.status === "waiting_human" && thread.open_interrupt_id ? store.interrupts.get(thread.open_interrupt_id) : undefined;
    if (!open || open.status !== "waiting_human") throw new AppError("not_waiting", "This thread has no open interrupt");
    if (open.interrupt_id !== interruptId) {
      throw new AppError("stale_interrupt", `Interrupt ${interruptId} is not the open one (${open.interrupt_id})`);
    }
    const pending = new Map(open.calls.map((c) => [c.call_id, c]));
    const seen = new Set<string>();
    for (const d of decisions) {
      if (seen.has(d.call_id)) throw new AppError("invalid_request", `Two decisions name call ${d.call_id}`);
      seen.add(d.call_id);
      if (!pending.has(d.call_id)) throw new AppError("unknown_call", `Call ${d.call_id} is not pending in this interrupt`);
    }
    const bound = decisions.map((d) => ({ ...d, args_hash: pending.get(d.call_id)!.args_hash }));
    const to = bound.some((d) => d.approved) ? "resumed" : "rejected";
    if (!store.interrupts.transition(interruptId, to, bound)) throw new AppError("not_waiting", "This interrupt was already decided");
    if (!store.threads.claimWaiting(threadId, runId, true)) throw new AppError("thread_busy", "A run is already in flight on this thread");
    return bound;
  })();
}
