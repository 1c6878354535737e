import type { Hono } from "hono";
import type { Access, Directory } from "../../auth/index.js";
import type { Logger } from "../../logger.js";
import type { DeliverySender } from "../../ops/index.js";
import { AppError, ERROR_STATUS, refusals } from "../../protocol/index.js";
import { type ChannelLane, decideViaChannel, type DecisionTokenStore, type RunService, type ThreadService } from "../../runs/index.js";
import { type ApprovalNotice, emailOfChange, noticeOfPending, shownVersions, versionsCurrent } from "./approval-notice.js";
import type { EmailDecisionArgs, EmailDecisionOutcome } from "./decide-callback.js";
import { decideRoutes } from "./decide-routes.js";
import { emailRecipients } from "./email-recipients.js";
import { closedLinks, EMAIL_LANE, emailDeliveries, emailSender } from "./email-sender.js";
import type { Mailer } from "./smtp-mailer.js";

/** A reject from a link with the reason left empty: what the agent reads. */
const LINK_REJECT_REASON = "Rejected from an emailed link";

/** Email as a face: the `/decide` pages, and how the lane's deliveries are sent. */
export interface EmailFace {
  /** Mount at `/decide`, before bearer auth and the JSON-only rule: the token is the credential. */
  routes: Hono;
  send: DeliverySender;
}

/**
 * Email's lane in the outbox: for each change of an interrupt, a mail to each person the gate
 * lets decide it (asked, escalated, edited in a quorum), or the links' end when it closes.
 */
export function emailChannel(o: { directory: Directory; access: Access }): ChannelLane {
  return {
    lane: EMAIL_LANE,
    deliveries(change, who) {
      const c = emailOfChange(change);
      if (c.kind === "none") return [];
      if (c.kind === "close") return [closedLinks(change.interrupt_id)];
      const to = emailRecipients(o.access, o.directory.entries, { notice: c.notice, owner: who.owner, requester: who.requester, partial: who.partial });
      return emailDeliveries(c.notice, to);
    },
  };
}

export function createEmailFace(o: {
  publicUrl: string;
  tokens: DecisionTokenStore;
  mailer: Mailer;
  directory: Directory;
  runs: RunService;
  threads: ThreadService;
  access: Access;
  log: Logger;
  now: () => number;
}): EmailFace {
  const log = o.log.child({ channel: "email" });

  /** The interrupt as `sub` may see it on the thread, if it is the one still waiting. */
  async function openInterrupt(a: { threadId: string; interruptId: string; principalSub: string }): Promise<ApprovalNotice | null> {
    const principal = o.directory.bySub(a.principalSub);
    if (!principal) return null;
    try {
      const notice = noticeOfPending(await o.threads.view(principal, a.threadId));
      return notice?.interrupt_id === a.interruptId ? notice : null;
    } catch (err) {
      // A thread gone or out of this person's sight: the link decides nothing.
      if (err instanceof AppError && (ERROR_STATUS[err.code] === 404 || ERROR_STATUS[err.code] === 403)) return null;
      throw err;
    }
  }

  async function decide(a: EmailDecisionArgs): Promise<EmailDecisionOutcome> {
    const principal = o.directory.bySub(a.principalSub);
    // Taken out of the directory since the mail left: the refusal any channel gives an unknown person.
    if (!principal) {
      const refused = refusals.unknownChannelUser();
      return { ok: false, code: refused.code, message: refused.message };
    }
    const outcome = await decideViaChannel(
      { runs: o.runs },
      {
        threadId: a.threadId,
        interruptId: a.interruptId,
        principal,
        via: "email",
        decision: a.decision === "approve" ? { approve: true } : { approve: false, reason: a.reason ?? LINK_REJECT_REASON },
        versions: a.versions,
      },
    );
    if (!outcome.ok) return outcome;
    if (outcome.waitingOn?.length) return { ok: true, summary: `Your approval is recorded as ${principal.sub}. The request still waits for others to decide.` };
    return { ok: true, summary: a.decision === "approve" ? `Approved as ${principal.sub}: the agent goes on.` : `Rejected as ${principal.sub}: the agent is told why.` };
  }

  return {
    routes: decideRoutes({ tokens: o.tokens, publicUrl: o.publicUrl, now: o.now, openInterrupt, decide, closedAs: (a) => o.threads.closedAs(a), log }),
    send: emailSender({
      mailer: o.mailer,
      tokens: o.tokens,
      publicUrl: o.publicUrl,
      now: o.now,
      // Read as the recipient would: no mail for an interrupt closed or edited meanwhile (its link would be dead).
      stillShown: async (notice, sub) => {
        const open = await openInterrupt({ threadId: notice.thread_id, interruptId: notice.interrupt_id, principalSub: sub });
        return !!open && versionsCurrent(shownVersions(notice), open);
      },
    }),
  };
}
