import { describe, expect, it } from "vitest";
import { bindResume } from "../../../src/gate/index.js";
import type { InterruptPayload } from "../../../src/protocol/index.js";

const call = (call_id: string, args: Record<string, unknown>) => ({ call_id, name: "send_email", args, policy: "approver" as const, editable: true, args_schema: {} });
const open: InterruptPayload = {
  thread_id: "t",
  interrupt_id: "i-1",
  calls: [call("c1", { to: "***", subject: "Hi" }), call("c2", { to: "***", subject: "Yo" })],
  questions: [],
  expires_at: "2030-01-01T00:00:00.000Z",
  resume_url: "/threads/t/resume",
};

describe("command.resume bound to call ids", () => {
  it("binds decisions by position; the calls left out get none (tollgate rejects them)", () => {
    expect(bindResume({ decisions: [{ type: "reject", message: "no" }] }, open)).toEqual({
      interruptId: "i-1",
      decisions: [{ call_id: "c1", approved: false, reason: "no" }],
      answers: [],
    });
  });

  it("refuses more decisions than action requests, and unknown decision types", () => {
    const three = { decisions: [{ type: "approve" }, { type: "approve" }, { type: "approve" }] };
    expect(() => bindResume(three, open)).toThrow(expect.objectContaining({ code: "invalid_request" }));
    expect(() => bindResume({ decisions: [{ type: "accept" }] }, open)).toThrow(expect.objectContaining({ code: "invalid_request" }));
  });

  it("turns an edit of whole arguments into the keys that changed: a masked field sent back stays as it was", () => {
    const edit = { type: "edit", edited_action: { name: "send_email", args: { to: "***", subject: "Hello" } } };
    expect(bindResume({ decisions: [edit] }, open).decisions).toEqual([{ call_id: "c1", approved: true, edited_args: { subject: "Hello" } }]);
    const unchanged = { type: "edit", edited_action: { name: "send_email", args: { to: "***", subject: "Hi" } } };
    expect(bindResume({ decisions: [unchanged] }, open).decisions).toEqual([{ call_id: "c1", approved: true }]);
    const renamed = { type: "edit", edited_action: { name: "refund_order", args: {} } };
    expect(() => bindResume({ decisions: [renamed] }, open)).toThrow(expect.objectContaining({ code: "invalid_request" }));
  });

  it("reads LangGraph's map keyed by interrupt id, with a question's answer beside the decisions", () => {
    const withQuestion = { ...open, questions: [{ question_id: "q-1", value: "Which plan?" }] };
    expect(bindResume({ "i-1": { decisions: [{ type: "approve" }] }, "q-1": "plan B" }, withQuestion)).toEqual({
      interruptId: "i-1",
      decisions: [{ call_id: "c1", approved: true }],
      answers: [{ question_id: "q-1", value: "plan B" }],
    });
  });

  it("answers a lone question with a bare value, as Command({resume: value}) does", () => {
    const question = { ...open, calls: [], questions: [{ question_id: "q-1", value: "Confirm the plan?" }] };
    expect(bindResume("yes", question)).toEqual({ interruptId: "i-1", decisions: [], answers: [{ question_id: "q-1", value: "yes" }] });
  });
});
