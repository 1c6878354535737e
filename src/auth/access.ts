import type { ApprovalPolicy } from "../protocol/index.js";
import { hasRole, type Principal } from "./principal.js";

/** What the rules need to know about a thread. */
export interface ThreadFacts {
  owner: string;
  /** Policies of the calls in its open interrupt (empty when none is open). */
  openPolicies: readonly ApprovalPolicy[];
  /** Who sent the message that led to the open interrupt. */
  openRequester: string | null;
  /** Whether the caller decided an interrupt of this thread before. */
  decidedByCaller: () => Promise<boolean>;
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
   * roles: four eyes.
   */
  mayDecide(p: Principal, owner: string, policy: ApprovalPolicy, requester: string | null = null): boolean {
    if (!this.enforced) return true;
    const approver = hasRole(p, "approver") || hasRole(p, "admin");
    return policy === "approver" ? approver && p.sub !== owner && p.sub !== requester : approver || p.sub === owner;
  }

  /** An interrupt is decided as a whole: `p` must be allowed every call in it. */
  mayDecideAll(p: Principal, owner: string, policies: readonly ApprovalPolicy[], requester: string | null = null): boolean {
    return policies.every((policy) => this.mayDecide(p, owner, policy, requester));
  }

  /**
   * May `p` see the thread (GET, stream, audit)? Its owner and admins; an approver while it waits
   * on calls it may decide, and for good once it has decided one of its interrupts.
   */
  async maySee(p: Principal, t: ThreadFacts): Promise<boolean> {
    if (this.owns(p, t.owner)) return true;
    if (!hasRole(p, "approver")) return false;
    if (t.openPolicies.length > 0 && this.mayDecideAll(p, t.owner, t.openPolicies, t.openRequester)) return true;
    return t.decidedByCaller();
  }

  /** `/metrics` needs `metrics` or `admin` when auth is on. */
  mayReadMetrics(p: Principal): boolean {
    return this.admin(p) || hasRole(p, "metrics");
  }
}
