import type { GoneReason } from "./decide-page.js";

/** What the link's POST asks the gate: this principal's decision on the calls the mail showed, at its versions. */
export interface EmailDecisionArgs {
  threadId: string;
  interruptId: string;
  principalSub: string;
  via: "email";
  decision: "approve" | "reject";
  reason?: string;
  /** call id → version, as the mail showed them. */
  versions: Readonly<Record<string, number>>;
}

/** The gate's answer: taken (with a sentence for the page), or refused with the API's code and message. */
export type EmailDecisionOutcome = { ok: true; summary: string } | { ok: false; code: string; message: string };

/**
 * How the page decides: the integrator points it at the gate's one entry (`decideViaChannel`),
 * with the principal looked up in the directory by `principalSub`. The page checks nothing the
 * gate checks.
 */
export type DecideViaEmail = (args: EmailDecisionArgs) => Promise<EmailDecisionOutcome>;

/** Refusals that say nothing about the link, only that now was a bad time: the token is given back. */
export const TRY_AGAIN_CODES: ReadonlySet<string> = new Set(["thread_busy", "rate_limited", "shutting_down", "overloaded", "storage_unavailable", "internal_error"]);

/** Refusals that mean the link is dead, as the 410 page words them. */
export const GONE_CODES: Readonly<Record<string, Exclude<GoneReason, "used">>> = {
  approval_expired: "expired",
  // Out of the principal's sight: the interrupt they were asked about closed without them.
  thread_not_found: "closed",
  not_waiting: "closed",
  stale_interrupt: "closed",
  // The calls are closed, or this person's approval counted already; the interrupt may still wait.
  already_decided: "decided",
  call_changed: "stale",
};
