import type { DirectoryEntry } from "../../auth/index.js";
import type { Deciders } from "../../gate/index.js";
import type { ApprovalNotice } from "./approval-notice.js";

/** One person a request is mailed to: the principal whose decision the link carries, and where. */
export interface EmailRecipient {
  sub: string;
  email: string;
}

/**
 * Who gets a mail for this interrupt: each directory entry with an `email` whom the gate's own rule
 * (`Deciders.mayDecideWaiting`, i.e. `Access`) lets decide it — every call when it is decided as
 * a whole, at least one when call by call (`partial`, a quorum). The owner and the requester are
 * in or out by that same rule (four eyes), never by a rule of this face. One mail per principal:
 * the first entry for a `sub` wins, as the directory does.
 */
export function emailRecipients(
  deciders: Pick<Deciders, "mayDecideWaiting">,
  entries: readonly DirectoryEntry[],
  o: { notice: Pick<ApprovalNotice, "calls" | "requested_by">; owner: string; requester: string | null; partial: boolean },
): EmailRecipient[] {
  const seen = new Set<string>();
  const out: EmailRecipient[] = [];
  for (const e of entries) {
    if (!e.email || seen.has(e.sub)) continue;
    seen.add(e.sub);
    // One whose approval every call shown already counts has nothing left to decide here.
    if (o.notice.calls.length && o.notice.calls.every((c) => c.policy === "quorum" && c.approvals?.some((a) => a.by === e.sub))) continue;
    const may = deciders.mayDecideWaiting({ sub: e.sub, roles: e.roles }, { owner: o.owner, calls: o.notice.calls, requester: o.requester, partial: o.partial });
    if (may) out.push({ sub: e.sub, email: e.email });
  }
  return out;
}
