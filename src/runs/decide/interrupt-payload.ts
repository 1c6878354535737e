import type { InterruptPayload } from "../../protocol/index.js";
import type { InterruptProgress, InterruptRecord } from "../../store/index.js";

/**
 * The interrupt as the `interrupt` event and `GET /threads/:id` show it: without the hashes that
 * bind approvals, its deadline as ISO 8601, and where to send the decisions (a wire concern,
 * hence here and not in the store that keeps the record). A quorum call shows who approved it so far.
 */
export function interruptPayload(r: Pick<InterruptRecord, "thread_id" | "interrupt_id" | "calls" | "questions" | "expires_at"> & { progress?: InterruptProgress }): InterruptPayload {
  return {
    thread_id: r.thread_id,
    interrupt_id: r.interrupt_id,
    calls: r.calls.map(({ args_hash: _bound, audit_hash: _audited, hitl: _asked, preview_hash: _seen, ...shown }) => {
      if (shown.policy !== "quorum") return shown;
      const approvals = (r.progress?.[shown.call_id]?.approvals ?? []).map((a) => ({ by: a.by, at: new Date(a.at).toISOString() }));
      return { ...shown, approvals };
    }),
    questions: r.questions,
    expires_at: new Date(r.expires_at).toISOString(),
    resume_url: `/threads/${encodeURIComponent(r.thread_id)}/resume`,
  };
}
