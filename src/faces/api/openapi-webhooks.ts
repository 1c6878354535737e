import { APPROVAL_WEBHOOK_TYPES } from "../../protocol/index.js";
import { type JsonSchema, ref } from "./openapi-components.js";

/** The `webhooks` key the approval webhook is published under, and its body's component. */
export const APPROVAL_WEBHOOK = "approval";
export const APPROVAL_WEBHOOK_COMPONENT = "ApprovalWebhook";

/**
 * The document's top-level `webhooks` (OpenAPI 3.1): what tollgate POSTs to APPROVAL_WEBHOOK_URL,
 * described as an operation the receiver implements. The receiver is not tollgate, so no bearer
 * token: the signature header is what authenticates the request.
 */
export function webhooks(): Record<string, Record<string, JsonSchema>> {
  return {
    [APPROVAL_WEBHOOK]: {
      post: {
        operationId: "approvalWebhook",
        summary: "An interrupt was opened, decided, expired or cancelled",
        description:
          `Sent to APPROVAL_WEBHOOK_URL when APPROVAL_WEBHOOK_URL is set, one per change: ${APPROVAL_WEBHOOK_TYPES.map((t) => `\`${t}\``).join(", ")}. ` +
          "Delivered from a durable outbox written in the same transaction as the change: at least once, in order per thread, " +
          "retried with exponential backoff and jitter until a 2xx (or WEBHOOK_MAX_ATTEMPTS, then marked failed and the thread's next one goes). " +
          "Verify `X-Tollgate-Signature` over the raw body before parsing it; deduplicate on `X-Tollgate-Delivery`.",
        security: [],
        parameters: [
          {
            name: "X-Tollgate-Signature",
            in: "header",
            required: true,
            description: "`sha256=` and the hex HMAC-SHA256 of the raw request body, keyed with APPROVAL_WEBHOOK_SECRET. Compare in constant time.",
            schema: { type: "string", pattern: "^sha256=[0-9a-f]{64}$" },
          },
          {
            name: "X-Tollgate-Delivery",
            in: "header",
            required: true,
            description: "The delivery's id: the same on every retry of one delivery, so a receiver can drop repeats.",
            schema: { type: "string", format: "uuid" },
          },
        ],
        requestBody: {
          required: true,
          description: "The change, signed byte for byte as sent: the same bytes on every retry.",
          content: { "application/json": { schema: ref(APPROVAL_WEBHOOK_COMPONENT) } },
        },
        responses: {
          "2XX": { description: "Delivered: tollgate records it and sends the thread's next webhook." },
          default: {
            description:
              "Any other status, a redirect, or no answer within WEBHOOK_TIMEOUT_MS: the same delivery (same body, same " +
              "`X-Tollgate-Delivery`) is retried later with backoff.",
          },
        },
      },
    },
  };
}
