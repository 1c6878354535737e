import { refusals } from "../../protocol/index.js";

/** What the preconditions read of the thread and its interrupts. */
export interface GateState {
  thread: { status: "idle" | "running" | "waiting_human" };
  /** The interrupt the request names, if it is this thread's. */
  named?: { status: string; expires_at: number };
  /** The thread's open interrupt, if any. */
  open?: { interrupt_id: string; status: string };
  /** The interrupt id the request names. */
  interruptId: string;
  now: number;
}

/**
 * Whether a decision may be taken at all, in the contract's order and with one message per code:
 * the named interrupt's window closed (`410 approval_expired`); a run in flight (`409
 * thread_busy`); nothing open (`409 not_waiting`); another interrupt open (`409 stale_interrupt`).
 * Who may decide (`404`, `403`) is asked before this, and the calls after.
 */
export function refuseUnlessOpen(s: GateState): void {
  const { named, open, now } = s;
  if (named && (named.status === "expired" || (named.status === "waiting_human" && now >= named.expires_at))) throw refusals.expired(named.expires_at);
  if (s.thread.status === "running") throw refusals.threadBusy();
  if (!open || open.status !== "waiting_human") throw refusals.notWaiting();
  if (open.interrupt_id !== s.interruptId) throw refusals.staleInterrupt();
}

/**
 * Why a compare-and-set on an open interrupt lost, read again afterwards: its deadline passed
 * (`410`), or another decision closed it (`409 not_waiting`); undefined while it is still open.
 */
export function whyNotOpen(again: { status: string; expires_at: number } | undefined, now: number): Error | undefined {
  if (again?.status === "expired" || (again?.status === "waiting_human" && now >= again.expires_at)) return refusals.expired(again.expires_at);
  if (again?.status !== "waiting_human") return refusals.alreadyClosed();
  return undefined;
}

/**
 * Why a face that binds decisions to the open interrupt's calls (LangGraph's shapes, which name
 * no interrupt) finds none: the same codes and messages `refuseUnlessOpen` gives, read from the
 * thread alone: its last interrupt closed by its deadline (`410`), a run in flight (`409
 * thread_busy`), or nothing open (`409 not_waiting`).
 */
export function refuseWithoutOpen(thread: { status: string; last_outcome: string | null }): never {
  if (thread.status === "idle" && thread.last_outcome === "expired") throw refusals.expired();
  if (thread.status === "running") throw refusals.threadBusy();
  throw refusals.notWaiting();
}
