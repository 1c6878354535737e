import type { Access, Principal } from "../auth/index.js";
import { AppError, type Decision, type DecisionVia, type ErrorCode, type InterruptPayload } from "../protocol/index.js";
import type { RunService, ThreadService } from "../runs/index.js";

/** A decision taken in a channel, as the person saw it there. */
export interface ChannelDecision {
  threadId: string;
  interruptId: string;
  principal: Principal;
  via: Extract<DecisionVia, "slack" | "email">;
  /** The channel's own id of the person (Slack user id), for the audit and logs. */
  channelUser?: string;
  decision: { approve: true } | { approve: false; reason: string };
  /** The calls the message showed, at the versions it showed (call id → version). */
  versions: Readonly<Record<string, number>>;
}

/** What came of it: the gate took it (a run started, or calls still wait), or its refusal, worded as the API words it. */
export type ChannelOutcome = { ok: true; runId?: string; waitingOn?: string[] } | { ok: false; code: ErrorCode; message: string };

export interface ChannelDecisionDeps {
  runs: RunService;
  threads: ThreadService;
  access: Access;
}

/**
 * Decides as `d.principal` through the gate's one entry, `RunService.startResume`, the one
 * `POST …/resume` calls: every rule (four eyes, roles, quorum, expiry, versions, single flight)
 * is the gate's, and a refusal is its `AppError`, returned rather than thrown so the channel can
 * tell that person alone. Nothing here decides who may do what.
 */
export async function decideViaChannel(deps: ChannelDecisionDeps, d: ChannelDecision): Promise<ChannelOutcome> {
  try {
    // The thread as this person may see it (a 404 for one who may not is the API's own refusal).
    const view = await deps.threads.view(d.principal, d.threadId);
    const decisions = channelDecisions(deps.access, d, { owner: view.owner, pending: view.pending });
    const run = await deps.runs.startResume(d.principal, {
      threadId: d.threadId,
      interruptId: d.interruptId,
      decisions,
      onDisconnect: "continue",
      via: d.via,
      ...(d.channelUser ? { channelUser: d.channelUser } : {}),
    });
    return "waiting_on" in run ? { ok: true, waitingOn: run.waiting_on } : { ok: true, runId: run.runId };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}

/**
 * The message's calls as decisions at the versions it showed. On an interrupt with a quorum call
 * (decided call by call) a click is this principal's decision on the calls still open that they
 * may decide; when that leaves none, every shown call is sent, so the gate gives its own refusal.
 */
function channelDecisions(access: Access, d: ChannelDecision, o: { owner: string; pending: InterruptPayload | null }): Decision[] {
  const shown = Object.keys(d.versions);
  const one = (call_id: string): Decision => ({
    call_id,
    approved: d.decision.approve,
    version: d.versions[call_id],
    ...(d.decision.approve ? {} : { reason: d.decision.reason }),
  });
  const open = o.pending?.interrupt_id === d.interruptId ? o.pending : undefined;
  if (!open || !open.calls.some((c) => c.policy === "quorum")) return shown.map(one);
  const still = open.calls.filter((c) => shown.includes(c.call_id) && (c.policy !== "quorum" || (c.approvals?.length ?? 0) < (c.requires?.approvers ?? 1)));
  const mine = still.filter(
    (c) => !(d.decision.approve && c.approvals?.some((a) => a.by === d.principal.sub)) && access.mayDecide(d.principal, { owner: o.owner, call: c, requester: null }),
  );
  return (mine.length ? mine.map((c) => c.call_id) : shown).map(one);
}
