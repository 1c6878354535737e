import type { Access, Principal } from "../../auth/index.js";
import { AppError, type DecisionVia, type ErrorCode } from "../../protocol/index.js";
import type { RunService } from "../run-service.js";
import type { ThreadService } from "../threads/thread-service.js";

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

/** What a channel face is built with; a decision needs only the run service's door. */
export interface ChannelDecisionDeps {
  runs: RunService;
  threads: ThreadService;
  access: Access;
}

/**
 * Decides as `d.principal` through the run service's one door, `RunService.startResume`, the one
 * `POST …/resume` calls: the channel hands over the choice and the versions it showed, and the
 * gate decides which of those calls this principal decides now, under every rule (four eyes,
 * roles, quorum, expiry, versions, single flight). A refusal is the gate's `AppError`, returned
 * rather than thrown so the channel can tell that person alone. Nothing here checks a rule.
 */
export async function decideViaChannel(deps: { runs: Pick<RunService, "startResume"> }, d: ChannelDecision): Promise<ChannelOutcome> {
  try {
    const run = await deps.runs.startResume(d.principal, {
      threadId: d.threadId,
      interruptId: d.interruptId,
      shown: { choice: d.decision, versions: d.versions },
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
