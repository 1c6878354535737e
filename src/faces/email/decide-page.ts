import { interruptCard } from "../../gate/index.js";
import type { ApprovalNotice } from "./approval-notice.js";
import { callHtml } from "./calls-html.js";
import type { DeadTokenReason } from "../../runs/index.js";
import { escapeHtml } from "./html-escape.js";

/**
 * The decide pages: plain HTML, no script, no outside resource (the CSP allows none), inline
 * styles only. Every value is escaped; the pages that refuse show no call and no argument.
 */
function page(title: string, body: string): string {
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)} · tollgate</title></head>`,
    '<body style="font-family:sans-serif;max-width:760px;margin:24px auto;padding:0 12px">',
    `<h1 style="font-size:22px">${escapeHtml(title)}</h1>`,
    body,
    "</body></html>",
  ].join("\n");
}

/** `GET /decide/<token>`: the gate's card of the calls and the Approve / Reject form. Posting it is what decides. */
export function decideFormPage(n: ApprovalNotice, o: { principalSub: string }): string {
  const card = interruptCard(n);
  const tools = card.tools.join(", ");
  return page(
    `Approve or reject: ${tools}`,
    [
      `<p>${escapeHtml(card.requested_by)} asked on thread <code>${escapeHtml(card.thread_id)}</code>. Decide by <time>${escapeHtml(card.expires_at)}</time>.</p>`,
      `<p>You decide as <strong>${escapeHtml(o.principalSub)}</strong>. This link works once.</p>`,
      ...card.calls.map(callHtml),
      // No action: the form posts to this same URL, which the CSP's form-action 'self' allows.
      '<form method="post" style="margin-top:24px">',
      '<label for="reason">Reason (shown to the agent if you reject)</label><br>',
      '<textarea id="reason" name="reason" rows="3" maxlength="500" style="width:100%"></textarea>',
      '<p><button type="submit" name="decision" value="approve" style="padding:8px 16px">Approve</button> ',
      '<button type="submit" name="decision" value="reject" style="padding:8px 16px">Reject</button></p>',
      "</form>",
    ].join("\n"),
  );
}

/** `POST` taken by the gate: what happened, in its words. */
export function outcomePage(decision: "approve" | "reject", summary: string): string {
  return page(decision === "approve" ? "Approved" : "Rejected", `<p>${escapeHtml(summary)}</p><p>You can close this page.</p>`);
}

/**
 * Why a link is dead: the token's own reasons, and `decided` for calls of an interrupt that may
 * still wait for others (closed by someone else, or approved by this person already).
 */
export type GoneReason = DeadTokenReason | "decided";

const GONE: Record<GoneReason, string> = {
  used: "This link was used already: a link decides once.",
  expired: "This request's deadline has passed: it can no longer be decided.",
  closed: "This request is no longer waiting: it was decided, cancelled or withdrawn.",
  decided: "The calls in this mail were already decided, or already approved by you: the request may still wait for others' decisions.",
  stale: "The calls were changed since this mail was sent: a newer mail holds a link for them as they now stand.",
};

/** `410`: the link is dead, and why. No call, no argument. */
export function gonePage(reason: GoneReason): string {
  return page("This link no longer works", `<p>${escapeHtml(GONE[reason])}</p>`);
}

/** `404`: no such link. */
export function notFoundPage(): string {
  return page("No such link", "<p>This link is not known here. Check that it was copied whole.</p>");
}

/** The gate refused the decision (four eyes, role…): its message, nothing else. */
export function refusedPage(message: string): string {
  return page("Not applied", `<p>${escapeHtml(message)}</p><p>Nothing was changed.</p>`);
}

/** A request the page could not have sent (another site's form, a bad field). */
export function badRequestPage(message: string): string {
  return page("Not applied", `<p>${escapeHtml(message)}</p><p>Nothing was changed.</p>`);
}

/** The decision could not be tried now (storage down, busy); the link still works. */
export function tryAgainPage(): string {
  return page("Try again shortly", "<p>The server could not take the decision just now. Nothing was changed, and the link still works.</p>");
}
