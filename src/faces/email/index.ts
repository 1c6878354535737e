/** Email as a face: links that decide once as the directory's principal, mailed through the outbox's own lane. */
export { type ApprovalNotice, emailOfChange, type EmailOfChange, noticeOfPending, shownVersions, versionsCurrent } from "./approval-notice.js";
export { type DecideViaEmail, type EmailDecisionArgs, type EmailDecisionOutcome } from "./decide-callback.js";
export { DECIDE_CSP, decideRoutes, type DecideRoutesDeps } from "./decide-routes.js";
export { type ApprovalEmail, approvalEmail, decideLink } from "./email-message.js";
export { type EmailRecipient, emailRecipients } from "./email-recipients.js";
export { closedLinks, EMAIL_LANE, emailDeliveries, type EmailDelivery, type EmailLinksClosed, emailSender } from "./email-sender.js";
export { type Mailer, smtpMailer } from "./smtp-mailer.js";
export { createEmailFace, emailChannel, type EmailFace } from "./email-face.js";
