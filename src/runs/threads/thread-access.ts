import type { Principal, ThreadFacts } from "../../auth/index.js";
import { threadNotFound } from "../../protocol/index.js";
import type { StoreOps, ThreadRow } from "../../store/index.js";
import { takesPartialDecisions } from "../decide/partial-decisions.js";
import type { RunContext } from "../run-context.js";

/** What the access rules need to know about a thread, read from the store. */
export async function threadFacts(ctx: RunContext, t: ThreadRow, p: Principal, store: StoreOps = ctx.store): Promise<ThreadFacts> {
  const open = t.status === "waiting_human" && t.open_interrupt_id ? await store.interrupts.get(t.open_interrupt_id) : undefined;
  return {
    owner: t.owner,
    openCalls: open?.status === "waiting_human" ? open.calls : [],
    openPartial: open ? takesPartialDecisions(open) : false,
    openRequester: open?.requester ?? null,
    decidedByCaller: () => store.audit.decidedBy(t.thread_id, p.sub),
  };
}

/**
 * The thread, if `p` may see it; otherwise exactly the error a missing thread gets, so that
 * probing ids tells nothing about other people's threads.
 */
export async function seeThread(ctx: RunContext, p: Principal, threadId: string, store: StoreOps = ctx.store): Promise<ThreadRow> {
  const t = await store.threads.get(threadId);
  if (!t || !(await ctx.access.maySee(p, await threadFacts(ctx, t, p, store)))) throw threadNotFound(threadId);
  return t;
}
