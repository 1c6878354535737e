/**
 * Two faces cannot show one call differently: Slack's message, the mail (text and HTML), the
 * decide page and the HITL `description` all render the gate's card, so each shows every part of
 * every call, word for word (HTML-escaped in mail and pages), whatever the values hold.
 */
import { describe, expect, it } from "vitest";
import { approvalEmail, type ApprovalNotice } from "../../../src/faces/email/index.js";
import { decideFormPage } from "../../../src/faces/email/decide-page.js";
import { slackMessage } from "../../../src/faces/slack/index.js";
import { callParts, interruptCard } from "../../../src/gate/index.js";
import { interruptsOf } from "../../../src/faces/langgraph/runs/hitl-value.js";
import type { PendingCall } from "../../../src/protocol/index.js";

const evil = '<https://evil.example|Click> <!channel> ``` *b* <img src=x onerror="alert(1)"> &amp;';
const calls: PendingCall[] = [
  { call_id: "c1", name: "refund_order", version: 2, args: { reason: `*amount is 5 dollars*\n${"x".repeat(2_800)}`, amount_cents: 49_999, account: "***" }, policy: "approver", preview: { refund: evil }, editable: true, args_schema: {} },
  { call_id: "c2", name: "send_email", version: 1, args: { body: evil }, policy: "quorum", requires: { role: "finance", approvers: 2 }, approvals: [{ by: "fin1", at: "x" }], preview_error: `failed: ${evil}`, editable: false, args_schema: {} },
];
const notice: ApprovalNotice = { thread_id: "t1", interrupt_id: "i1", calls, expires_at: "2026-12-05T13:00:00.000Z", requested_by: "alice" };

const unescapeHtml = (s: string): string => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
function slackRead(blocks: unknown): string {
  const out: string[] = [];
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (!x || typeof x !== "object") return;
    const o = x as Record<string, unknown>;
    if (typeof o.text === "string") out.push(o.text);
    for (const [k, v] of Object.entries(o)) if (k !== "value") walk(v);
  };
  walk(blocks);
  return out.join("");
}

describe("one card, every face", () => {
  const card = interruptCard(notice);
  const faces: Array<[string, string]> = [
    ["Slack", slackRead(slackMessage({ ...notice, type: "approval.requested", at: "2026-12-05T12:00:00.000Z" }, {}).blocks)],
    ["the mail's HTML", unescapeHtml(approvalEmail(notice, { link: "https://x/decide/T", to: "fin2@example.com" }).html)],
    ["the decide page", unescapeHtml(decideFormPage(notice, { principalSub: "fin2" }))],
  ];
  const mailText = approvalEmail(notice, { link: "https://x/decide/T", to: "fin2@example.com" }).text;
  const hitl = (interruptsOf({ ...notice, questions: [], resume_url: "/threads/t1/resume" })[0]!.value as { action_requests: Array<{ description: string }> }).action_requests;

  it.each(faces)("%s shows every part of every call, whole and as the card words it, and the deadline", (_face, shown) => {
    for (const c of card.calls) for (const p of callParts(c)) expect(shown).toContain(p.text);
    expect(shown).toContain(card.expires_at);
  });

  it("the mail's text part and each HITL description show each part too (JSON indented in the mail, the deadline in both)", () => {
    for (const c of card.calls) for (const p of callParts(c)) for (const line of p.text.split("\n")) expect(mailText).toContain(line);
    expect(mailText).toContain(card.expires_at);
    card.calls.forEach((c, i) => {
      const description = hitl[i]!.description;
      expect(description.startsWith("Tool execution requires approval\n\n")).toBe(true);
      for (const p of callParts(c)) expect(description).toContain(p.text);
      expect(description).toContain(`Decide by ${card.expires_at}`);
    });
  });

  it("mail and page HTML-escape every value: nothing of it is markup there", () => {
    for (const html of [approvalEmail(notice, { link: "https://x/decide/T", to: "a@b" }).html, decideFormPage(notice, { principalSub: "fin2" })]) {
      expect(html).not.toContain("<img");
      expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    }
  });
});
