import { randomUUID } from "node:crypto";
import { closingOutcomes } from "../../graphs/tool-messages.js";
import type { RunContext } from "./run-context.js";
import { closePendingCalls } from "./pending-calls.js";

class LostRace extends Error {}

/**
 * Closes an open interrupt without running anything (cancel or expiry): the interrupt leaves
 * `waiting_human` and the thread is held, both compare-and-set in one transaction; then each
 * pending call gets its closing tool message and the thread goes idle. No model call is made.
 * Returns false when someone else (a resume, another closer) got there first.
 */
export async function closeInterrupt(
  ctx: RunContext,
  threadId: string,
  interruptId: string,
  to: "expired" | "cancelled",
): Promise<boolean> {
  const holder = `close-${randomUUID()}`;
  try {
    ctx.store.db.transaction(() => {
      if (!ctx.store.interrupts.transition(interruptId, to)) throw new LostRace();
      if (!ctx.store.threads.claimWaiting(threadId, holder, false)) throw new LostRace(); // rolls back the first
    })();
  } catch (err) {
    if (err instanceof LostRace) return false;
    throw err;
  }
  try {
    const fallback = to === "expired" ? closingOutcomes.expired() : closingOutcomes.cancelled();
    await closePendingCalls(ctx.graph, ctx.store.ledger, threadId, fallback);
  } catch (err) {
    ctx.log.error("could not write closing tool messages", { thread_id: threadId, interrupt_id: interruptId, err });
  } finally {
    ctx.store.threads.release(threadId, holder, "idle", to);
  }
  ctx.log.info(`interrupt ${to}`, { thread_id: threadId, interrupt_id: interruptId });
  return true;
}
