import type { Principal } from "../../auth/index.js";
import { type ForkPoint, readForkPoint } from "../../graph/index.js";
import { refusals } from "../../protocol/index.js";
import type { StoreOps } from "../../store/index.js";
import type { RunContext } from "../run-context.js";
import { seeThread } from "../threads/thread-access.js";

/**
 * The earlier checkpoint a run asks to start from (LangGraph's fork, regenerate), if `p` may see
 * the thread: an unknown one is `not_found`; one where the graph waited on calls is `unsupported`.
 */
export async function forkPoint(ctx: RunContext, p: Principal, at: { threadId: string; checkpointId: string }): Promise<ForkPoint> {
  const { threadId, checkpointId } = at;
  const thread = await seeThread(ctx, p, threadId);
  const fork = await readForkPoint(ctx.graphs.forThread(thread.graph_id), threadId, checkpointId);
  if (fork === "unknown") throw refusals.noCheckpoint(checkpointId);
  if (fork === "open_calls") throw refusals.forkAtOpenCalls();
  return fork;
}

/**
 * Refuses a fork from a checkpoint older than a call people approved on the thread: from there the
 * model could ask for the same effect again under a new call id. Inside the run's claim, once the
 * thread is held, so no call is approved between this check and the run.
 */
export async function refuseForkBeforeApprovals(tx: StoreOps, threadId: string, fork: ForkPoint): Promise<void> {
  const trail = await tx.audit.list(threadId);
  const missed = trail.some((r) => (r.decision === "approved" || r.decision === "edited") && !fork.answered.has(r.call_id));
  if (missed) throw refusals.forkBeforeApprovals();
}
