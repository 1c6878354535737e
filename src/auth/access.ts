import type { PendingCall } from "../protocol/index.js";
import { hasRole, type Principal } from "./principal.js";

/** A pending call as the rules see it: its policy, and what a quorum requires. */
export type CallPolicy = Pick<PendingCall, "policy" | "requires">;

/** What the rules need to know about a thread. */
export interface ThreadFacts {
  owner: string;
  /** The calls of its open interrupt (empty when none is open). */
  openCalls: readonly CallPolicy[];
  /** Whether that interrupt is decided call by call (a quorum). */
  openPartial?: boolean;
  /** Who sent the message that led to the open interrupt. */
  openRequester: string | null;
  /** Whether the caller decided an interrupt of this thread before. */
  decidedByCaller: () => Promise<boolean>;
}

/** The calls of one interrupt, on a thread owned by `owner`, asked for in a turn `requester` started. */
export interface InterruptCalls {
  owner: string;
  calls: readonly CallPolicy[];
  /** Null or not given: no requester on record. */
  requester?: string | null;
}

/**
 * The rules of *Identity and access*, in one place. With auth off (`enforced` false) everyone is
 * the local user and may do everything, four eyes included: there is only one person.
 */
export class Access {
  constructor(readonly enforced: boolean) {}

  private admin(p: Principal): boolean {
    return !this.enforced || hasRole(p, "admin");
  }

  /** Admins (and everyone, with auth off) see every thread in lists. */
  seesAll(p: Principal): boolean {
    return this.admin(p);
  }

  /** Owner (or admin): may write to the thread, cancel it, and see it. */
  owns(p: Principal, owner: string): boolean {
    return this.admin(p) || p.sub === owner;
  }

  /** Creating threads and starting runs needs `user` (or `admin`). */
  mayStartRuns(p: Principal): boolean {
    return this.admin(p) || hasRole(p, "user");
  }

  /**
   * May `p` decide one call of this policy on a thread owned by `owner`, asked for in a turn that
   * `requester` started? `owner`: the owner or an approver. `approver`: an approver or admin who is
   * neither the owner nor the requester (an admin may write to others' threads), whatever their
   * roles: four eyes. `quorum`: one with the required role (an admin has every role), and four
   * eyes too: the owner and the requester never count.
   */
  mayDecide(p: Principal, on: { owner: string; call: CallPolicy; requester?: string | null }): boolean {
    if (!this.enforced) return true;
    const { owner, call, requester = null } = on;
    const admin = hasRole(p, "admin");
    const approver = hasRole(p, "approver") || admin;
    const fourEyes = p.sub !== owner && p.sub !== requester;
    if (call.policy === "quorum") return fourEyes && (admin || hasRole(p, call.requires?.role ?? "approver"));
    return call.policy === "approver" ? approver && fourEyes : approver || p.sub === owner;
  }

  /** An interrupt is decided as a whole: `p` must be allowed every call in it. */
  mayDecideAll(p: Principal, on: InterruptCalls): boolean {
    return on.calls.every((call) => this.mayDecide(p, { owner: on.owner, call, requester: on.requester }));
  }

  /** May `p` decide at least one of these calls (an interrupt that takes partial decisions)? */
  mayDecideAny(p: Principal, on: InterruptCalls): boolean {
    return on.calls.some((call) => this.mayDecide(p, { owner: on.owner, call, requester: on.requester }));
  }

  /**
   * May `p` see the thread (GET, stream, audit)? Its owner and admins; whoever may decide what it
   * waits on, while it waits, and for good once they have decided on one of its interrupts.
   */
  async maySee(p: Principal, t: ThreadFacts): Promise<boolean> {
    if (this.owns(p, t.owner)) return true;
    if (t.openCalls.length > 0 && this.mayDecideWaiting(p, { owner: t.owner, calls: t.openCalls, requester: t.openRequester, partial: t.openPartial })) return true;
    return t.decidedByCaller();
  }

  /**
   * May `p` take a decision on this open interrupt: every call, when it is decided as a whole; at
   * least one, when it holds a quorum call (it takes partial decisions).
   */
  mayDecideWaiting(p: Principal, on: { owner: string; calls: readonly CallPolicy[]; requester?: string | null; partial?: boolean }): boolean {
    const { owner, calls, requester = null, partial = calls.some((c) => c.policy === "quorum") } = on;
    return partial ? this.mayDecideAny(p, { owner, calls, requester }) : this.mayDecideAll(p, { owner, calls, requester });
  }

  /** `/metrics` needs `metrics` or `admin` when auth is on. */
  mayReadMetrics(p: Principal): boolean {
    return this.admin(p) || hasRole(p, "metrics");
  }
}
