/**
 * The one home of the approval rules, below tools and every face, pure (it imports protocol and
 * lib only): decisions' shapes, who may decide, preconditions, partial progress, edits and
 * versions, which calls a principal decides now, what an approval binds and the permit a tool asks
 * for. Faces translate their shapes into the gate's and call the run service, which asks the gate.
 */
// The texts are the protocol's catalogue; the gate decides when they are given.
export { clip, DEFAULT_REASON, NO_DECISION, refusals, whoMay } from "../protocol/index.js";
// rules/
export type { GateCall } from "./rules/gate-call.js";
export type { CallEdit, CallProgress, InterruptProgress } from "./rules/progress-types.js";
export { applyDecisions, decisionsFromProgress, takesPartialDecisions } from "./rules/progress.js";
export type { CheckedEdit, ProgressInput, ProgressStep, TakenDecision } from "./rules/progress.js";
export { neededApprovals, refuseEditPastPolicy, refuseUndecidable, refuseUndecidableInterrupt } from "./rules/who-may-decide.js";
export type { CallPolicy, Decider, Deciders, PolicyOf } from "./rules/who-may-decide.js";
export { checkVersions } from "./rules/versions.js";
export { refuseUnlessOpen, refuseWithoutOpen, whyNotOpen, type GateState } from "./rules/preconditions.js";
export { callsDecidableNow, decisionsOnShown, type DecideNowInput, type ShownChoice, type ShownDecision } from "./rules/decide-now.js";
// decisions/
export { bindResume, type BoundResume } from "./decisions/hitl-resume.js";
export { readDecisions } from "./decisions/permit-decisions.js";
export { answersSchema, decisionSchema, decisionsSchema, resumeSchema } from "./decisions/tollgate-decisions.js";
export { RESERVED_ARG_NAMES } from "./decisions/reserved-arg-names.js";
// permit/
export type { GateDecision, GatedCall, GatePermit, ToolGate } from "./permit/gate-decision.js";
export { canonicalJson, hashArgs } from "./permit/args-hash.js";
// card/
export type { CallCard, CardBlock, CardPart, CardSource, FaceLimits, InterruptCard } from "./card/index.js";
export { callCard, callParts, fitCard, headParts, interruptCard, layOutCard, NO_LIMITS, partsText, showsWhole, shownJson, splitText } from "./card/index.js";
