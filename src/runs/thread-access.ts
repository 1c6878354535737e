import type { Principal, ThreadFacts } from "../auth/index.js";
import { threadNotFound } from "../protocol/index.js";
import type { ThreadRow } from "../store/index.js";
import type { RunContext } from "./run-context.js";

/** What the access rules need to know about a thread, read from the store. */
export function threadFacts(ctx: RunContext, t: ThreadRow, p: Principal): ThreadFacts {
  const open = t.status === "waiting_human" && t.open_interrupt_id ? ctx.store.interrupts.get(t.open_interrupt_id) : undefined;
  return {
    owner: t.owner,
    openPolicies: open?.status === "waiting_human" ? open.calls.map((c) => c.policy) : [],
    openRequester: open?.requester ?? null,
    decidedByCaller: () => ctx.store.audit.decidedBy(t.thread_id, p.sub),
  };
}

/**
 * The thread, if `p` may see it; otherwise exactly the error a missing thread gets, so that
 * probing ids tells nothing about other people's threads.
 */
export function seeThread(ctx: RunContext, p: Principal, threadId: string): ThreadRow {
  const t = ctx.store.threads.get(threadId);
  if (!t || !ctx.access.maySee(p, threadFacts(ctx, t, p))) throw threadNotFound(threadId);
  return t;
}
