import type { CallEdit, InterruptCall, InterruptProgress, InterruptQuestion, InterruptRecord } from "./types.js";

/** An interrupt row as both databases store it: the calls and questions as JSON text. */
export interface InterruptRow extends Omit<InterruptRecord, "calls" | "questions" | "escalate_at" | "escalated_at" | "progress" | "progress_seq"> {
  calls: string;
  questions: string | null;
  progress?: string | null;
  progress_seq?: number | string | null;
  /** Null in rows made before escalation existed (as if absent). */
  escalate_at?: number | null;
  escalated_at?: number | null;
}

/** The questions column: null when the graph asked none (most interrupts). */
export const questionsColumn = (r: Pick<InterruptRecord, "questions">): string | null => (r.questions?.length ? JSON.stringify(r.questions) : null);

/**
 * The record of a stored row. Calls stored by an older version, before policies: they need an
 * approver (fail closed: the tool's policy then is not known here), allow no edits, and get an
 * audit hash keyed over the stored plain hash (the arguments themselves are not at hand).
 */
export function interruptFromRow(r: InterruptRow, keyedHash: (v: unknown) => string): InterruptRecord {
  const calls = (JSON.parse(r.calls) as Array<Partial<InterruptCall> & Pick<InterruptCall, "call_id" | "name" | "args" | "args_hash">>).map(
    (c): InterruptCall => ({ policy: "approver", editable: false, args_schema: {}, version: 1, audit_hash: c.audit_hash ?? keyedHash({ args_hash: c.args_hash }), ...c }),
  );
  const progress = r.progress ? (JSON.parse(r.progress) as InterruptProgress) : {};
  return {
    ...r,
    calls: calls.map((c) => ({ ...asEdited(c, progress[c.call_id]?.edit), version: progress[c.call_id]?.version ?? c.version })),
    questions: r.questions ? (JSON.parse(r.questions) as InterruptQuestion[]) : [],
    escalate_at: r.escalate_at ?? null,
    escalated_at: r.escalated_at ?? null,
    progress,
    progress_seq: Number(r.progress_seq ?? 0),
  };
}

/**
 * A call as it stands: once edited while its interrupt waits, it shows the edit's arguments,
 * policy and preview to everyone (and every rule reads them); the hashes of what the model asked
 * stay, since an approval binds the call as asked and the edit on top of it.
 */
function asEdited(c: InterruptCall, e: CallEdit | undefined): InterruptCall {
  if (!e) return c;
  const { preview: _p, preview_error: _pe, preview_hash: _ph, requires: _r, ...rest } = c;
  return {
    ...rest,
    args: e.args,
    policy: e.policy,
    ...(e.requires ? { requires: e.requires } : {}),
    ...(e.preview !== undefined ? { preview: e.preview } : {}),
    ...(e.preview_error !== undefined ? { preview_error: e.preview_error } : {}),
    ...(e.preview_hash !== undefined ? { preview_hash: e.preview_hash } : {}),
  };
}
