import type { InterruptPayload } from "../protocol/index.js";
import type { InterruptRecord } from "../store/index.js";

/**
 * The interrupt as the `interrupt` event and `GET /threads/:id` show it: without the hashes that
 * bind approvals, its deadline as ISO 8601, and where to send the decisions (a wire concern,
 * hence here and not in the store that keeps the record).
 */
export function interruptPayload(r: InterruptRecord): InterruptPayload {
  return {
    thread_id: r.thread_id,
    interrupt_id: r.interrupt_id,
    calls: r.calls.map(({ args_hash: _bound, audit_hash: _audited, hitl: _asked, ...shown }) => shown),
    questions: r.questions,
    expires_at: new Date(r.expires_at).toISOString(),
    resume_url: `/threads/${encodeURIComponent(r.thread_id)}/resume`,
  };
}
