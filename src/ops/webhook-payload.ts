import type { ApprovalWebhook } from "../protocol/index.js";

// The body's type and schema are part of the wire contract, in src/protocol.
export type { ApprovalWebhook, ApprovalWebhookType } from "../protocol/index.js";

/** The exact bytes that are stored, signed and sent: fixed once, so every retry signs the same body. */
export function approvalWebhookBody(w: ApprovalWebhook): string {
  const { decided_by, decisions, waiting_on, partial, ...rest } = w;
  return JSON.stringify({
    ...rest,
    ...(decided_by !== undefined ? { decided_by } : {}),
    ...(decisions ? { decisions } : {}),
    ...(waiting_on ? { waiting_on } : {}),
    ...(partial !== undefined ? { partial } : {}),
  });
}
