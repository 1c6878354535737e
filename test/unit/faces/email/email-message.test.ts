/** The mail: masked calls with previews and versions, the policy in words, the deadline, the link; everything escaped. */
import { describe, expect, it } from "vitest";
import { approvalEmail, decideLink } from "../../../../src/faces/email/index.js";
import { notice, refundCall } from "./notice-fixture.js";

const now = Date.parse("2026-12-05T12:00:00Z");
const link = decideLink("https://tollgate.example.com/", "TOKEN_abc");

describe("approvalEmail", () => {
  it("shows each call masked, with preview, version, policy and deadline, and the link", () => {
    const n = notice(now, { calls: [refundCall(), refundCall({ call_id: "call_q", version: 3, policy: "quorum", requires: { role: "finance", approvers: 2 }, approvals: [{ by: "fin1", at: "2026-12-05T12:01:00Z" }] })] });
    const m = approvalEmail(n, { link, to: "fin2@example.com" });
    expect(link).toBe("https://tollgate.example.com/decide/TOKEN_abc");
    expect(m.subject).toBe("Approval needed: issue_refund");
    for (const body of [m.text, m.html]) {
      expect(body).toContain("call_refund_1");
      expect(body).toContain("version 1");
      expect(body).toContain("version 3");
      expect(body).toContain("A-1001");
      expect(body).toContain("4200 cents to order A-1001");
      expect(body).toContain("Needs an approver");
      expect(body).toContain("Needs 2 of finance — approved by fin1, waiting for 1 more");
      expect(body).toContain(n.expires_at);
      expect(body).toContain("https://tollgate.example.com/decide/TOKEN_abc");
      expect(body).toContain("fin2@example.com");
    }
    expect(m.text).toContain('"card_number": "***"');
  });

  it("escapes every value in the HTML, and keeps the subject to one line", () => {
    const evil = '<img src=x onerror="alert(1)">&\'';
    const n = notice(now, {
      thread_id: evil,
      requested_by: evil,
      calls: [refundCall({ name: `refund\r\nBcc: all@example.com <b>`, call_id: evil, args: { note: evil }, preview: { p: evil }, preview_error: evil })],
    });
    const m = approvalEmail(n, { link: `${link}"><script>`, to: evil });
    expect(m.html).not.toContain("<img");
    expect(m.html).not.toContain("<script>");
    expect(m.html).not.toContain("<b>");
    expect(m.html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;");
    expect(m.subject).not.toMatch(/[\r\n]/);
  });

  it("says why it is sent again", () => {
    expect(approvalEmail(notice(now, { reason: "escalated" }), { link, to: "a@b" }).subject).toMatch(/^Still waiting/);
    expect(approvalEmail(notice(now, { reason: "edited" }), { link, to: "a@b" }).subject).toMatch(/^Approval needed again/);
  });
});
