import { type ApprovalWebhook, type PendingCall, policyLine } from "../../protocol/index.js";

/** What a button carries: the interrupt and the versions the message shows. It grants nothing by itself. */
export interface ButtonValue {
  /** thread id */
  t: string;
  /** interrupt id */
  i: string;
  /** call id → version shown */
  v: Record<string, number>;
}

export const APPROVE_ACTION = "tollgate.approve";
export const REJECT_ACTION = "tollgate.reject";
export const REJECT_VIEW = "tollgate.reject_reason";
export const REASON_BLOCK = "reason";
export const REASON_INPUT = "reason_input";

/** Slack caps a section's text; arguments and previews are cut to fit. */
const MAX_TEXT = 2_800;

/**
 * The Block Kit message for an interrupt as its latest change leaves it: the tool and the thread,
 * each call's masked arguments, preview and version, the policy in words, the deadline, and while
 * it is open the Approve / Reject… buttons; once closed, who decided what and when, no buttons.
 * Built from the approval webhook's body, which is already masked and scrubbed.
 */
export function slackMessage(w: ApprovalWebhook, o: { pageUrl?: string }): { text: string; blocks: unknown[] } {
  const tools = [...new Set(w.calls.map((c) => c.name))].join(", ");
  const open = isOpen(w);
  const text = `${headline(w)}: ${tools} on thread ${w.thread_id}`;
  const blocks: unknown[] = [
    { type: "header", text: { type: "plain_text", text: cut(`${headline(w)}: ${tools}`, 150) } },
    { type: "context", elements: [{ type: "mrkdwn", text: `Thread \`${w.thread_id}\` · asked by ${w.requested_by} · ${open ? `decide by ${w.expires_at}` : status(w)}` }] },
  ];
  for (const call of w.calls) blocks.push({ type: "section", text: { type: "mrkdwn", text: cut(callText(call), MAX_TEXT) } });
  if (open) {
    const value: ButtonValue = { t: w.thread_id, i: w.interrupt_id, v: Object.fromEntries(w.calls.map((c) => [c.call_id, c.version ?? 1])) };
    const v = JSON.stringify(value);
    blocks.push({
      type: "actions",
      block_id: "tollgate.decide",
      elements: [
        { type: "button", action_id: APPROVE_ACTION, style: "primary", text: { type: "plain_text", text: "Approve" }, value: v },
        { type: "button", action_id: REJECT_ACTION, style: "danger", text: { type: "plain_text", text: "Reject…" }, value: v },
      ],
    });
  }
  if (o.pageUrl) blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `<${o.pageUrl}/#thread=${encodeURIComponent(w.thread_id)}|Open the thread> for edits and call-by-call choices` }] });
  return { text, blocks };
}

/** Whether the change leaves the interrupt waiting (buttons shown). */
export const isOpen = (w: ApprovalWebhook): boolean => w.type === "approval.requested" || w.type === "approval.escalated" || (w.type === "approval.decided" && w.partial === true);

function headline(w: ApprovalWebhook): string {
  switch (w.type) {
    case "approval.requested":
      return "Approval needed";
    case "approval.escalated":
      return "Still waiting for approval";
    case "approval.decided":
      return w.partial ? "Partly approved" : "Decided";
    case "approval.expired":
      return "Expired";
    case "approval.cancelled":
      return "Cancelled";
  }
}

function status(w: ApprovalWebhook): string {
  if (w.type === "approval.expired") return `expired at ${w.at}`;
  if (w.type === "approval.cancelled") return `cancelled${w.decided_by ? ` by ${w.decided_by}` : ""} at ${w.at}`;
  const what = (w.decisions ?? []).map((d) => `${d.call_id}: ${d.decision}`).join(", ");
  return `decided by ${w.decided_by ?? "?"} at ${w.at}${what ? ` (${what})` : ""}`;
}

function callText(c: PendingCall): string {
  const lines = [`*${c.name}* · \`${c.call_id}\` · version ${c.version ?? 1}`, policyLine(c), "```" + JSON.stringify(c.args, null, 1) + "```"];
  if (c.preview !== undefined) lines.push(`Preview: \`\`\`${JSON.stringify(c.preview, null, 1)}\`\`\``);
  if (c.preview_error) lines.push(`Preview unavailable: ${c.preview_error}`);
  return lines.join("\n");
}

const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
