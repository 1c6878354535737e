// @ts-check
// The sub-agents' tools: plain LangChain tools, each wrapped once with what tollgate must know.
import { tool } from "@langchain/core/tools";
import { defineTool, toolContext } from "tollgate";
import { z } from "zod";

/** A stand-in for your billing system. */
const INVOICES = new Map([["INV-7", { invoice_id: "INV-7", amount_cents: 4_200, card: "4242424242424242" }]]);

/**
 * Billing's tools, over a refund log (in memory here; yours is a payment API).
 * @param {Map<string, object>} refunds refunds made, by idempotency key
 */
export function billingTools(refunds = new Map()) {
  const lookupInvoice = tool(
    async ({ invoice_id }) => {
      const invoice = INVOICES.get(invoice_id);
      if (!invoice) throw new Error(`No invoice ${invoice_id}`);
      return JSON.stringify(invoice);
    },
    { name: "lookup_invoice", description: "An invoice by id (e.g. INV-7): amount and card.", schema: z.object({ invoice_id: z.string() }) },
  );
  const refundInvoice = tool(
    async ({ invoice_id, amount_cents }, config) => {
      // The same key on every attempt at one approved call: pass it to your payment API.
      const key = toolContext(config).idempotencyKey ?? invoice_id;
      const refund = { refund_id: `R-${refunds.size + 1}`, invoice_id, amount_cents };
      refunds.set(key, refund);
      return JSON.stringify(refund);
    },
    {
      name: "refund_invoice",
      description: "Refund an invoice, in part or whole. Irreversible: a second person approves it.",
      schema: z.object({ invoice_id: z.string(), amount_cents: z.number().int().positive() }),
    },
  );
  return [
    // Read-only: runs at once. The card number never reaches a person, a log or an event.
    defineTool(lookupInvoice, { kind: "read", sensitiveOutput: ["card"] }),
    // Four eyes: whoever asked cannot approve; the approver may lower the amount.
    defineTool(refundInvoice, { kind: "irreversible", policy: "approver", editable: true }),
  ];
}

/** Shipping's one tool: read-only, so its sub-agent never stops for anyone. */
export function shippingTools() {
  const trackParcel = tool(async ({ order_id }) => JSON.stringify({ order_id, status: "in transit", eta: "Friday" }), {
    name: "track_parcel",
    description: "Where an order's parcel is.",
    schema: z.object({ order_id: z.string() }),
  });
  return [defineTool(trackParcel, { kind: "read" })];
}
