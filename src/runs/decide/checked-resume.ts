import { resumeSchema, type ShownDecision } from "../../gate/index.js";
import { type Decision, formatIssues, refusals } from "../../protocol/index.js";
import type { ResumeRequest } from "./resume-gate.js";

/** The decisions a face's one choice could make at most: one per call it showed, at its version. */
export function shownDecisions(shown: ShownDecision): Decision[] {
  const { choice, versions } = shown;
  return Object.entries(versions).map(([call_id, version]) =>
    choice.approve ? { call_id, approved: true, version } : { call_id, approved: false, reason: choice.reason, version },
  );
}

/**
 * A resume held to `POST …/resume`'s schema, whichever face it came through: its own body, one of
 * LangGraph's shapes bound to it, or a channel's choice on the calls it showed (checked as the
 * decisions it could make). `400 invalid_request` names what does not fit; nothing is read before.
 */
export function checkedResume(req: ResumeRequest): ResumeRequest {
  if (req.shown && req.decisions) throw refusals.callsOrShown();
  const decisions = req.shown ? shownDecisions(req.shown) : req.decisions;
  const parsed = resumeSchema.safeParse({ interrupt_id: req.interruptId, decisions, answers: req.answers });
  if (!parsed.success) throw refusals.badResume(formatIssues(parsed.error.issues, { max: 3, clip: 64 }));
  if (req.shown) return req;
  const { decisions: named, answers } = parsed.data;
  return { ...req, ...(named ? { decisions: named } : {}), ...(answers ? { answers } : {}) };
}
