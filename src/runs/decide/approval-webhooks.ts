import { approvalWebhookBody, type ApprovalWebhook } from "../../ops/index.js";
import { takesPartialDecisions } from "../../gate/index.js";
import type { InterruptProgress, NewInterrupt, StoreOps } from "../../store/index.js";
import { interruptPayload } from "./interrupt-payload.js";
import type { RunContext } from "../run-context.js";

/** A change of an interrupt to report: the record, what happened and when, and what the type adds. */
export interface ApprovalChange extends Pick<ApprovalWebhook, "decided_by" | "decisions" | "waiting_on" | "partial"> {
  record: NewInterrupt & { progress?: InterruptProgress };
  type: ApprovalWebhook["type"];
  /** When it happened (ms): the body's `at`, and when the delivery is due. */
  at: number;
}

/**
 * Enqueues the approval webhook for a change of `o.record`, inside the transaction `tx` that makes
 * the change: it is sent if and only if the change commits, to the webhook and to each channel
 * (Slack, email) configured. Nothing when neither is.
 * The calls are masked and scrubbed as `GET /threads/:id` shows them.
 */
export async function enqueueApprovalWebhook(ctx: Pick<RunContext, "redactor" | "settings">, tx: StoreOps, o: ApprovalChange): Promise<void> {
  const { record, type, at, ...extra } = o;
  const channels = ctx.settings.channels ?? [];
  if (!ctx.settings.webhooks && !channels.length) return;
  const thread = await tx.threads.get(record.thread_id);
  const shown = ctx.redactor.interrupt(interruptPayload(record));
  const change: ApprovalWebhook = {
    type,
    thread_id: record.thread_id,
    interrupt_id: record.interrupt_id,
    calls: shown.calls,
    expires_at: shown.expires_at,
    requested_by: thread?.owner ?? record.requester ?? "",
    ...extra,
    at: new Date(at).toISOString(),
  };
  const body = approvalWebhookBody(change);
  if (ctx.settings.webhooks) await tx.webhooks.enqueue(record.thread_id, body, at);
  // Each channel in its own lane, from the same masked change: a dead webhook holds no Slack message back.
  const who = { owner: thread?.owner ?? "", requester: record.requester ?? null, partial: takesPartialDecisions(record) };
  for (const c of channels) {
    const deliveries = c.deliveries ? c.deliveries(change, who) : [{ ref: record.interrupt_id, body }];
    for (const d of deliveries) await tx.webhooks.enqueue(record.thread_id, d.body, { at, lane: c.lane, ref: d.ref });
  }
}
