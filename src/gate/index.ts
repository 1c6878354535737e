/**
 * The one home of the approval rules, below every face: decisions' shapes, who may decide,
 * preconditions, partial progress, edits and versions, what an approval binds, refusal texts.
 * Faces translate their shapes into the gate's and call the run service, which asks the gate.
 */
export { clip, DEFAULT_REASON, NO_DECISION, refusals } from "./refusals.js";
export type { GateCall } from "./gate-call.js";
export type { CallEdit, CallProgress, InterruptProgress } from "./progress-types.js";
export { applyDecisions, decisionsFromProgress, takesPartialDecisions } from "./progress.js";
export type { CheckedEdit, ProgressInput, ProgressStep, TakenDecision } from "./progress.js";
export { forbiddenAfterEdit, neededApprovals, refuseEditPastPolicy, refuseUndecidable, refuseUndecidableInterrupt, whoMay } from "./who-may-decide.js";
export type { CallPolicy, Deciders, PolicyOf } from "./who-may-decide.js";
export { checkVersions } from "./versions.js";
export { refuseUnlessOpen, refuseWithoutOpen, whyNotOpen, type GateState } from "./preconditions.js";
export { bindResume, type BoundResume } from "./hitl-resume.js";
export { readDecisions } from "./permit-decisions.js";
export { answersSchema, decisionSchema, decisionsSchema, resumeSchema } from "./tollgate-decisions.js";
