import { interruptCard } from "../../gate/index.js";
import type { ApprovalNotice } from "./approval-notice.js";
import { callHtml, callText } from "./calls-html.js";
import { escapeHtml } from "./html-escape.js";

/** A mail ready for the transport (the addresses are the sender's business). */
export interface ApprovalEmail {
  subject: string;
  text: string;
  html: string;
}

/** Subject lines are one line: a tool name with a newline must not add headers or lines. */
const oneLine = (s: string, n = 120): string => {
  const flat = s.replace(/[\r\n\t]+/g, " ").trim();
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

/**
 * The mail asking one person to decide: the gate's card of the interrupt (the calls masked with
 * previews and versions, the policy in words, the deadline), and the link. `link` is
 * `PUBLIC_URL/decide/<token>`; it is the only place the token appears, and the mail says it is
 * personal.
 */
export function approvalEmail(n: ApprovalNotice, o: { link: string; to: string }): ApprovalEmail {
  const card = interruptCard(n);
  const tools = card.tools.join(", ");
  const lead = n.reason === "escalated" ? "Still waiting for your approval" : n.reason === "edited" ? "Approval needed again (edited)" : "Approval needed";
  const subject = oneLine(`${lead}: ${tools}`);
  const asked = `${card.requested_by} asked on thread ${card.thread_id}. Decide by ${card.expires_at}.`;
  const text = [
    `${lead}: ${tools}`,
    "",
    asked,
    "",
    ...card.calls.map(callText),
    "",
    `Approve or reject: ${o.link}`,
    "",
    `This link is for ${o.to} alone and works once. Opening it changes nothing; the page asks you to choose.`,
  ].join("\n");
  const html = [
    "<!doctype html><html><body style=\"font-family:sans-serif;max-width:720px\">",
    `<h2>${escapeHtml(lead)}: ${escapeHtml(tools)}</h2>`,
    `<p>${escapeHtml(asked)}</p>`,
    ...card.calls.map(callHtml),
    `<p style="margin:24px 0"><a href="${escapeHtml(o.link)}" style="background:#1a7f37;color:#fff;padding:10px 16px;text-decoration:none;border-radius:4px">Approve or reject</a></p>`,
    `<p style="color:#666;font-size:12px">This link is for ${escapeHtml(o.to)} alone and works once. Opening it changes nothing; the page asks you to choose.</p>`,
    "</body></html>",
  ].join("\n");
  return { subject, text, html };
}

/** `PUBLIC_URL/decide/<token>`; `publicUrl` without a trailing slash. */
export function decideLink(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/decide/${token}`;
}
