/**
 * The people of the gate model and the contract's rules of who may decide what ("Identity and
 * access", "Approval policies as teams run them"), written again from the contract, not imported
 * from the server: the model is only worth something if it can disagree with `src/auth`.
 */

/** Everyone who acts in the model. alice owns every thread and asks for every call. */
export const WHO = ["alice", "ops", "fin1", "fin2", "admin", "bob"] as const;
export type Who = (typeof WHO)[number];

/** Each principal's roles: an owner, an approver, two of finance, an admin, a stranger. */
export const ROLES: Record<Who, readonly string[]> = {
  alice: ["user"],
  ops: ["approver"],
  fin1: ["finance"],
  fin2: ["finance"],
  admin: ["admin"],
  bob: ["user"],
};

/** Bearer tokens, one per principal (AUTH_TOKENS). */
export const TOKEN: Record<Who, string> = Object.fromEntries(WHO.map((w) => [w, `tok-${w}-gate-model`])) as Record<Who, string>;

/**
 * Who Slack and email reach: everyone but bob has a Slack user; fin2 has no email, so no mail and
 * no link (a quorum by mail then needs fin1 and admin).
 */
export const SLACK_USER: Partial<Record<Who, string>> = { alice: "UALICE", ops: "UOPS", fin1: "UFIN1", fin2: "UFIN2", admin: "UADMIN" };
export const EMAIL: Partial<Record<Who, string>> = { alice: "alice@example.com", ops: "ops@example.com", fin1: "fin1@example.com", admin: "admin@example.com", bob: "bob@example.com" };

/** The server's AUTH_TOKENS value: the directory, channels' ids included. */
export const AUTH_TOKENS = JSON.stringify(
  Object.fromEntries(
    WHO.map((w) => [TOKEN[w], { sub: w, roles: ROLES[w], ...(SLACK_USER[w] ? { slack_user: SLACK_USER[w] } : {}), ...(EMAIL[w] ? { email: EMAIL[w] } : {}) }]),
  ),
);

/** The thread's owner, who also sends every message (the requester of every call). */
export const OWNER: Who = "alice";

export type Policy = { kind: "owner" } | { kind: "approver" } | { kind: "quorum"; role: string; approvers: number };

/** Above this many cents a refund needs two of finance (src/tools/demo/refund-order.ts). */
export const LARGE_REFUND_CENTS = 50_000;

/** The demo tools' policies, as the contract states them. */
export function policyOf(tool: string, args: Record<string, unknown>): Policy {
  if (tool === "send_email") return { kind: "owner" };
  return (args.amount_cents as number) > LARGE_REFUND_CENTS ? { kind: "quorum", role: "finance", approvers: 2 } : { kind: "approver" };
}

const has = (w: Who, role: string) => ROLES[w].includes(role) || ROLES[w].includes("admin");

/**
 * May `w` decide one call of this policy? owner: the owner or an approver (admin). approver: an
 * approver or admin who is neither owner nor requester. quorum: the role (admin has every role),
 * never owner or requester.
 */
export function mayDecide(w: Who, p: Policy): boolean {
  const fourEyes = w !== OWNER;
  if (p.kind === "quorum") return fourEyes && has(w, p.role);
  if (p.kind === "approver") return fourEyes && has(w, "approver");
  return w === OWNER || has(w, "approver");
}

/** How many distinct approvals close a call of this policy. */
export const needed = (p: Policy): number => (p.kind === "quorum" ? p.approvers : 1);

/** Owner or admin: may cancel, and always sees the thread. */
export const owns = (w: Who): boolean => w === OWNER || ROLES[w].includes("admin");
