import { type ApprovalWebhookType, type AuditDecision, type PendingCall, policyLine } from "../../protocol/index.js";
import type { CallCard, InterruptCard } from "./card-types.js";

/**
 * What a card is drawn from: an open interrupt (`InterruptPayload`, an `ApprovalNotice`) or a change
 * of one (`ApprovalWebhook`). Its calls are masked already: the card is never built from raw ones.
 */
export interface CardSource {
  thread_id: string;
  interrupt_id: string;
  calls: readonly PendingCall[];
  expires_at: string;
  requested_by?: string;
  /** The change that leaves it so; none: it waits as asked. */
  type?: ApprovalWebhookType;
  decided_by?: string;
  decisions?: ReadonlyArray<{ call_id: string; decision: AuditDecision }>;
  partial?: boolean;
  at?: string;
}

/** A value as indented JSON, as every face shows arguments and previews. */
export function shownJson(v: unknown): string {
  return JSON.stringify(v, null, 2) ?? String(v);
}

/** One call as every face shows it. */
export function callCard(c: PendingCall): CallCard {
  return {
    call_id: c.call_id,
    name: c.name,
    version: c.version ?? 1,
    policy: policyLine(c),
    args: shownJson(c.args),
    ...(c.preview !== undefined ? { preview: shownJson(c.preview) } : {}),
    ...(c.preview_error ? { preview_error: c.preview_error } : {}),
  };
}

/** The one description of an interrupt that every face renders. */
export function interruptCard(s: CardSource): InterruptCard {
  const open = isOpen(s);
  return {
    thread_id: s.thread_id,
    interrupt_id: s.interrupt_id,
    ...(s.requested_by !== undefined ? { requested_by: s.requested_by } : {}),
    headline: headline(s),
    tools: [...new Set(s.calls.map((c) => c.name))],
    open,
    expires_at: s.expires_at,
    status: open ? `decide by ${s.expires_at}` : closedStatus(s),
    calls: s.calls.map(callCard),
    versions: Object.fromEntries(s.calls.map((c) => [c.call_id, c.version ?? 1])),
  };
}

/** Whether the change leaves the interrupt waiting. */
const isOpen = (s: CardSource): boolean =>
  s.type === undefined || s.type === "approval.requested" || s.type === "approval.escalated" || (s.type === "approval.decided" && s.partial === true);

function headline(s: CardSource): string {
  switch (s.type) {
    case undefined:
    case "approval.requested":
      return "Approval needed";
    case "approval.escalated":
      return "Still waiting for approval";
    case "approval.decided":
      return s.partial ? "Partly approved" : "Decided";
    case "approval.expired":
      return "Expired";
    case "approval.cancelled":
      return "Cancelled";
  }
}

function closedStatus(s: CardSource): string {
  const at = s.at ?? s.expires_at;
  if (s.type === "approval.expired") return `expired at ${at}`;
  if (s.type === "approval.cancelled") return `cancelled${s.decided_by ? ` by ${s.decided_by}` : ""} at ${at}`;
  const what = (s.decisions ?? []).map((d) => `${d.call_id}: ${d.decision}`).join(", ");
  return `decided by ${s.decided_by ?? "?"} at ${at}${what ? ` (${what})` : ""}`;
}
