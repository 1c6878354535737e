import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/index.js";
import { refusals } from "../../protocol/index.js";
import type { ThreadRow } from "../../store/index.js";
import type { RunContext } from "../run-context.js";
import { forkPoint, refuseForkBeforeApprovals } from "../start/fork-check.js";
import { claimRefusal } from "../start/claim-refusal.js";
import { seeThread } from "./thread-access.js";

/** `p`'s own thread, idle: what may be copied, or copied from. Someone else's reads as missing. */
async function idleThreadOf(ctx: RunContext, p: Principal, threadId: string): Promise<ThreadRow> {
  const t = await seeThread(ctx, p, threadId);
  if (!ctx.access.owns(p, t.owner)) throw refusals.onlyOwnerCopies();
  if (!ctx.access.mayStartRuns(p)) throw refusals.copyNeedsUser();
  if (t.status === "running") throw claimRefusal(threadId, "busy");
  if (t.status === "waiting_human") throw claimRefusal(threadId, "awaiting_approval");
  return t;
}

/**
 * A new thread of `p`'s with the checkpoints, audit trail and ledger entries of `threadId`: what
 * was settled there is settled on the copy, and a fork on the copy meets the approvals given on
 * the original. Only an idle thread is copied: an open interrupt's decisions belong to its own
 * thread, and a run in flight has not written its end yet.
 */
export async function copyThread(ctx: RunContext, p: Principal, threadId: string): Promise<string> {
  await idleThreadOf(ctx, p, threadId);
  const copyId = randomUUID();
  if (await ctx.store.threads.copy(threadId, copyId, p.sub)) return copyId;
  // Not idle any more (a run started since the read): the store copied nothing.
  const now = await seeThread(ctx, p, threadId);
  throw claimRefusal(threadId, now.status === "waiting_human" ? "awaiting_approval" : "busy");
}

/**
 * LangGraph's "re-run from here": checkpoint `checkpointId` copied as the thread's newest, so the
 * next run starts from it. The fork rule applies as to a run from a checkpoint: an unknown one is
 * `not_found`, one where the graph waited on calls or older than a call approved on the thread is
 * `unsupported`. Answers the new checkpoint's config.
 */
export async function copyCheckpoint(ctx: RunContext, p: Principal, at: { threadId: string; checkpointId: string }): Promise<Record<string, unknown>> {
  const { threadId } = at;
  const t = await idleThreadOf(ctx, p, threadId);
  const fork = await forkPoint(ctx, p, at);
  await ctx.store.transaction(async (tx) => {
    const now = await tx.threads.get(threadId);
    if (now?.status !== "idle") throw claimRefusal(threadId, now?.status === "waiting_human" ? "awaiting_approval" : "busy");
    await refuseForkBeforeApprovals(tx, threadId, fork);
  });
  const graph = ctx.graphs.forThread(t.graph_id).graph;
  const next = await graph.updateState({ configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: at.checkpointId } }, undefined, "__copy__");
  return { ...(next.configurable ?? {}) };
}
