import type { Principal, ThreadFacts } from "../../auth/index.js";
import { threadNotFound } from "../../protocol/index.js";
import type { StoreOps, ThreadRow } from "../../store/index.js";
import { takesPartialDecisions } from "../decide/partial-decisions.js";
import type { RunContext } from "../run-context.js";

/** What the access rules need to know about a thread, read from `store` (a transaction's, or the store itself). */
export async function threadFacts(store: StoreOps, t: ThreadRow, p: Principal): Promise<ThreadFacts> {
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
 * reading ids tells nothing about other people's threads. Read from `at.store`: the run context
 * passes its own, a transaction passes `{ access, store: tx }`.
 */
export async function seeThread(at: Pick<RunContext, "access"> & { store: StoreOps }, p: Principal, threadId: string): Promise<ThreadRow> {
  const t = await at.store.threads.get(threadId);
  if (!t || !(await at.access.maySee(p, await threadFacts(at.store, t, p)))) throw threadNotFound(threadId);
  return t;
}
