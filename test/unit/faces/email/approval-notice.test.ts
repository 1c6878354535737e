/** From the server's shapes to what a mail shows, and when a link's versions still stand. */
import { describe, expect, it } from "vitest";
import { emailOfChange, noticeOfPending, versionsCurrent } from "../../../../src/faces/email/index.js";
import type { ApprovalWebhook } from "../../../../src/protocol/index.js";
import { refundCall } from "./notice-fixture.js";

const a = refundCall({ call_id: "a" });
const b = refundCall({ call_id: "b", version: 2 });
const hook = (over: Partial<ApprovalWebhook>): ApprovalWebhook => ({ type: "approval.requested", thread_id: "t", interrupt_id: "i", calls: [a, b], expires_at: "2026-12-05T13:00:00.000Z", requested_by: "alice", at: "2026-12-05T12:00:00.000Z", ...over });

describe("approval notices", () => {
  it("asked and escalated mail who may decide; an escalation shows the calls still waiting; closing changes end the links", () => {
    expect(emailOfChange(hook({}))).toMatchObject({ kind: "mail", notice: { interrupt_id: "i", calls: [a, b], requested_by: "alice", reason: "requested" } });
    expect(emailOfChange(hook({ type: "approval.escalated", waiting_on: ["b"] }))).toMatchObject({ kind: "mail", notice: { calls: [b], reason: "escalated" } });
    for (const type of ["approval.decided", "approval.expired", "approval.cancelled"] as const) expect(emailOfChange(hook({ type }))).toEqual({ kind: "close" });
  });

  it("in a quorum, an approval mails nobody (the other links stand); an edit mails the calls still open at their new versions", () => {
    expect(emailOfChange(hook({ type: "approval.decided", partial: true, decisions: [{ call_id: "a", decision: "approved" }] }))).toEqual({ kind: "none" });
    const q = refundCall({ call_id: "q", version: 2, policy: "quorum", requires: { role: "finance", approvers: 2 }, approvals: [{ by: "fin1", at: "2026-12-05T12:00:00.000Z" }] });
    const done = refundCall({ call_id: "d", policy: "quorum", requires: { role: "finance", approvers: 1 }, approvals: [{ by: "fin1", at: "2026-12-05T12:00:00.000Z" }] });
    const edited = emailOfChange(hook({ type: "approval.decided", partial: true, calls: [q, done, a], decisions: [{ call_id: "q", decision: "edited" }, { call_id: "a", decision: "rejected" }] }));
    expect(edited).toMatchObject({ kind: "mail", notice: { calls: [q], reason: "edited" } });
  });

  it("a thread view's pending interrupt becomes a notice; none, null", () => {
    const pending = { thread_id: "t", interrupt_id: "i", calls: [a], questions: [], expires_at: "x", resume_url: "/threads/t/resume" };
    expect(noticeOfPending({ owner: "alice", pending })).toEqual({ thread_id: "t", interrupt_id: "i", calls: [a], expires_at: "x", requested_by: "alice" });
    expect(noticeOfPending({ owner: "alice", pending: null })).toBeNull();
  });

  it("versions stand while every shown call is open at its shown version", () => {
    expect(versionsCurrent({ a: 1, b: 2 }, { calls: [a, b] })).toBe(true);
    expect(versionsCurrent({ b: 2 }, { calls: [a, b] })).toBe(true);
    expect(versionsCurrent({ a: 1, b: 1 }, { calls: [a, b] })).toBe(false);
    expect(versionsCurrent({ a: 1, b: 2 }, { calls: [b] })).toBe(false);
  });
});
