import type { Access } from "./access.js";
import type { CallPolicy } from "./access.js";
import type { Principal } from "./principal.js";

/** A principal the channels may reach: AUTH_TOKENS' or AUTH_DIRECTORY's entry. */
export interface DirectoryEntry {
  sub: string;
  roles: readonly string[];
  /** The Slack user id (`U…`/`W…`) whose clicks are this principal's. */
  slack_user?: string;
  email?: string;
}

/**
 * Who Slack and email reach, and as whom a click or a link decides. A channel decision takes the
 * roles of the entry, never a JWT's: the channel has no token to read them from.
 */
export class Directory {
  private readonly bySlack = new Map<string, DirectoryEntry>();
  private readonly byMail = new Map<string, DirectoryEntry>();
  private readonly bySubject = new Map<string, DirectoryEntry>();

  constructor(readonly entries: readonly DirectoryEntry[]) {
    // The first entry naming a user or address wins: AUTH_TOKENS come before AUTH_DIRECTORY.
    for (const e of entries) {
      if (e.slack_user && !this.bySlack.has(e.slack_user)) this.bySlack.set(e.slack_user, e);
      if (e.email && !this.byMail.has(e.email.toLowerCase())) this.byMail.set(e.email.toLowerCase(), e);
      if (!this.bySubject.has(e.sub)) this.bySubject.set(e.sub, e);
    }
  }

  /** The principal a Slack user id maps to; undefined: that user can decide nothing. */
  bySlackUser(userId: string): Principal | undefined {
    return principalOf(this.bySlack.get(userId));
  }

  /** The principal an address maps to (case-insensitive); undefined: it can decide nothing. */
  byEmail(address: string): Principal | undefined {
    return principalOf(this.byMail.get(address.toLowerCase()));
  }

  /** The principal of an entry's `sub` (an emailed link carries the sub it was minted for). */
  bySub(sub: string): Principal | undefined {
    return principalOf(this.bySubject.get(sub));
  }

  /** Entries who may decide at least one of these calls, by the gate's own rule (`Access.mayDecideWaiting`). */
  mayDecide(access: Access, on: { owner: string; calls: readonly CallPolicy[]; requester?: string | null; partial?: boolean }): DirectoryEntry[] {
    return this.entries.filter((e) => access.mayDecideWaiting({ sub: e.sub, roles: e.roles }, on));
  }
}

const principalOf = (e: DirectoryEntry | undefined): Principal | undefined => (e ? { sub: e.sub, roles: e.roles } : undefined);
