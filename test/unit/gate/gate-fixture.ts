/**
 * What the gate's pure rules are handed, built from real parts: identity's own rules (`Access`,
 * with auth on or off), calls as the store keeps them, principals as the directory gives them.
 */
import { Access } from "../../../src/auth/index.js";
import type { GateCall } from "../../../src/gate/index.js";

export const AUTH_ON = new Access(true);
export const AUTH_OFF = new Access(false);

/** The thread's owner (and requester), an approver, two of finance, and the local user of auth off. */
export const alice = { sub: "alice", roles: ["user"] };
export const ops = { sub: "ops", roles: ["approver"] };
export const fin1 = { sub: "fin1", roles: ["approver", "finance"] };
export const fin2 = { sub: "fin2", roles: ["approver", "finance"] };
export const anonymous = { sub: "anonymous", roles: ["user", "approver", "metrics", "admin"] };

/** A call needing two of finance, one needing an approver, and one its owner may decide. */
export const quorum = (call_id = "q", version = 1): GateCall => ({ call_id, name: "refund_order", policy: "quorum", requires: { role: "finance", approvers: 2 }, version, args_hash: `h-${call_id}` });
export const approverCall = (call_id = "a", version = 1): GateCall => ({ call_id, name: "refund_order", policy: "approver", version, args_hash: `h-${call_id}` });
export const ownerCall = (call_id = "o", version = 1): GateCall => ({ call_id, name: "send_email", policy: "owner", version, args_hash: `h-${call_id}` });

/** Where the interrupt stands: `approvedBy` per call, and calls already closed. */
export function progressOf(o: { approvedBy?: Record<string, string[]>; closed?: Record<string, "approved" | "rejected"> } = {}) {
  const out: Record<string, { approvals: Array<{ by: string; at: number }>; closed?: { decision: "approved" | "rejected"; by: string; at: number } }> = {};
  for (const [id, by] of Object.entries(o.approvedBy ?? {})) out[id] = { approvals: by.map((b) => ({ by: b, at: 1 })) };
  for (const [id, decision] of Object.entries(o.closed ?? {})) out[id] = { ...(out[id] ?? { approvals: [] }), closed: { decision, by: "someone", at: 1 } };
  return out;
}
