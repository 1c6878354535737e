/** Email as a face: links that decide once as the directory's principal, mailed through the outbox's own lane. */
export { type ApprovalNotice, emailOfChange, type EmailOfChange, noticeOfPending, shownVersions, versionsCurrent } from "./approval-notice.js";
export { type DecideViaEmail, type EmailDecisionArgs, type EmailDecisionOutcome } from "./decide-callback.js";
export { DECIDE_CSP, decideRoutes, type DecideRoutesDeps } from "./decide-routes.js";
export { type DecisionTokenGrant, hashDecisionToken, mintDecisionToken } from "./decision-token.js";
export { type ConsumeResult, DEAD_TOKEN_REASONS, type DeadTokenReason, type DecisionTokenRecord, type DecisionTokenStore, MemoryDecisionTokenStore } from "./decision-token-store.js";
export { type ApprovalEmail, approvalEmail, decideLink } from "./email-message.js";
export { type EmailRecipient, emailRecipients } from "./email-recipients.js";
export { closedLinks, EMAIL_LANE, emailDeliveries, type EmailDelivery, type EmailLinksClosed, emailSender } from "./email-sender.js";
export { PgDecisionTokenStore } from "./postgres-decision-token-store.js";
export { type Mailer, smtpMailer } from "./smtp-mailer.js";
export { SqliteDecisionTokenStore } from "./sqlite-decision-token-store.js";
export { createEmailFace, emailChannel, type EmailFace } from "./email-face.js";
