import type { AttemptResult, DeliverySender } from "../../ops/index.js";
import type { ApprovalNotice } from "./approval-notice.js";
import { shownVersions } from "./approval-notice.js";
import type { DecisionTokenStore } from "../../runs/index.js";
import { approvalEmail, decideLink } from "./email-message.js";
import type { EmailRecipient } from "./email-recipients.js";
import type { Mailer } from "./smtp-mailer.js";

/** The outbox lane email deliveries go through: its own order per thread, apart from webhooks and Slack. */
export const EMAIL_LANE = "email";

/**
 * One delivery of the email lane: one notice to one person. One per recipient, so a bad address
 * retries alone and nobody gets a second mail for another's failure. It holds no token: the
 * token is minted at send time, so the outbox never stores one.
 */
export interface EmailDelivery {
  notice: ApprovalNotice;
  to: EmailRecipient;
}

/** The email lane's other delivery: the interrupt closed, so its links die (they are refused already, by the interrupt's own state; this also marks them). */
export interface EmailLinksClosed {
  closed: string;
}

/** The outbox body that kills an interrupt's links. */
export function closedLinks(interruptId: string): { ref: string; body: string } {
  return { ref: interruptId, body: JSON.stringify({ closed: interruptId } satisfies EmailLinksClosed) };
}

/** The outbox bodies for one notice, one per recipient; enqueue each with `{ lane: EMAIL_LANE, ref: `${interrupt_id}:${sub}` }`. */
export function emailDeliveries(notice: ApprovalNotice, recipients: readonly EmailRecipient[]): Array<{ ref: string; body: string }> {
  return recipients.map((to) => ({ ref: `${notice.interrupt_id}:${to.sub}`, body: JSON.stringify({ notice, to } satisfies EmailDelivery) }));
}

/**
 * Sends one email delivery: mints a token bound to the recipient, the interrupt and the versions
 * shown, mails the link, and forgets the token when the mail did not leave. A notice already past
 * its deadline, or whose calls no longer wait as it shows them (`stillShown`: closed, or edited
 * since), is settled without a mail.
 */
export function emailSender(o: {
  mailer: Mailer;
  tokens: DecisionTokenStore;
  publicUrl: string;
  now: () => number;
  /** Whether the interrupt still waits as the notice shows it, for this person (the integrator reads the thread); default: assume it does. */
  stillShown?: (notice: ApprovalNotice, sub: string) => Promise<boolean>;
}): DeliverySender {
  return async (d): Promise<AttemptResult> => {
    const parsed = JSON.parse(d.body) as EmailDelivery | EmailLinksClosed;
    if ("closed" in parsed) return { receipt: `closed ${await o.tokens.closeInterrupt(parsed.closed, o.now())}` };
    const { notice, to } = parsed;
    const expiresAt = Date.parse(notice.expires_at);
    if (!(expiresAt > o.now())) return { receipt: "skipped: expired" };
    if (o.stillShown && !(await o.stillShown(notice, to.sub))) return { receipt: "skipped: no longer waiting as shown" };
    const token = await o.tokens.issue(
      { principalSub: to.sub, threadId: notice.thread_id, interruptId: notice.interrupt_id, versions: shownVersions(notice), expiresAt },
      o.now(),
    );
    const mail = approvalEmail(notice, { link: decideLink(o.publicUrl, token), to: to.email });
    try {
      const sent = await o.mailer.send(to.email, mail);
      return { receipt: sent.messageId };
    } catch (err) {
      await o.tokens.discard(token);
      return { error: smtpFailure(err) };
    }
  };
}

/** Why a send failed, from nodemailer's error: its code and the server's reply code, never the message. */
function smtpFailure(err: unknown): string {
  const e = err as { code?: string; responseCode?: number; command?: string };
  if (e.responseCode) return `smtp: ${e.responseCode}${e.command ? ` after ${e.command}` : ""}`;
  return `smtp: ${e.code ?? (err instanceof Error ? err.name : "error")}`;
}
