import type { DecisionVia } from "../../protocol/index.js";
import type { RunContext } from "../run-context.js";

/** An interrupt's pending calls, each with how it was decided (the audit trail's words). */
export interface DecisionReport {
  threadId: string;
  interruptId: string;
  /** Who decided; null for the system (expiry). */
  principal: string | null;
  calls: ReadonlyArray<{ call_id: string; tool: string; decision: string }>;
  /** When the interrupt opened and when the decision was committed (ms since the epoch). */
  openedAt: number;
  decidedAt: number;
  /** Decisions taken call by call (a quorum): approvals that left their call open are counted apart. */
  partial?: boolean;
  /** The face a person's decision came through; none: a closing (expiry, cancel). */
  via?: DecisionVia;
}

/**
 * A decision on an interrupt has been committed (a resume's gate, a cancel, an expiry): one log
 * line naming who decided, and the approval metrics. Called after the commit, never inside the
 * transaction: a rolled-back decision was not made.
 */
export function reportDecision(ctx: Pick<RunContext, "log" | "metrics" | "store">, d: DecisionReport): void {
  noticeThread(ctx, d.threadId);
  ctx.metrics.decided(d.calls.map((c) => c.decision), d.decidedAt - d.openedAt, d.via ?? "system");
  if (d.partial) ctx.metrics.approvedPartially(d.calls.filter((c) => c.decision === "approved").length);
  ctx.log.info("approval decided", {
    thread_id: d.threadId,
    interrupt_id: d.interruptId,
    ...(d.principal === null ? {} : { principal: d.principal }),
    calls: d.calls.map(({ call_id, tool, decision }) => ({ call_id, tool, decision })),
    ...(d.partial ? { partial: true } : {}),
    ...(d.via ? { via: d.via } : {}),
  });
}

/** Tells thread streams on every replica that a run started on the thread or its interrupt changed. */
export function noticeThread(ctx: Pick<RunContext, "log" | "store">, threadId: string): void {
  ctx.store.bus.publish("thread", threadId).catch((err: unknown) => {
    ctx.log.warn("thread notice not sent: thread streams catch up at their next poll", { thread_id: threadId, error: String(err) });
  });
}
