// @ts-check
// The desk's own tools: plain LangChain tools, each wrapped once with what tollgate must know.
import { tool } from "@langchain/core/tools";
import { defineTool, throwIfAborted, toolContext } from "tollgate";
import { z } from "zod";

/** A stand-in for your customer database. */
const CUSTOMERS = new Map([
  ["C-100", { customer_id: "C-100", name: "Ada Lovelace", balance_cents: 12_500 }],
  ["C-200", { customer_id: "C-200", name: "Alan Turing", balance_cents: 0 }],
]);

/**
 * The tools, over a payout ledger (in memory here; yours is a database or a payment API).
 * @param {Map<string, object>} payouts payouts sent, by idempotency key
 */
export function payoutDeskTools(payouts = new Map()) {
  // Read-only: runs at once, no one is asked.
  const lookupCustomer = tool(
    async ({ customer_id }) => {
      const customer = CUSTOMERS.get(customer_id);
      if (!customer) throw new Error(`No customer ${customer_id}`);
      return JSON.stringify(customer);
    },
    {
      name: "lookup_customer",
      description: "Look up a customer by id (e.g. C-100): name and balance owed to them, in cents.",
      schema: z.object({ customer_id: z.string() }),
    },
  );

  // Irreversible: money leaves. It runs only once a person approves this exact call.
  const sendPayout = tool(
    async ({ customer_id, amount_cents, iban }, config) => {
      const { idempotencyKey, signal } = toolContext(config);
      // The same key for every attempt at one approved call: a retry after a crash must not pay twice.
      const key = idempotencyKey ?? `${customer_id}:${amount_cents}:${iban}`;
      const earlier = payouts.get(key);
      if (earlier) return JSON.stringify(earlier);
      if (!CUSTOMERS.has(customer_id)) throw new Error(`No customer ${customer_id}`);
      throwIfAborted(signal); // the run was cancelled: do not start the transfer
      const payout = { payout_id: `P-${payouts.size + 1}`, customer_id, amount_cents, iban_last4: iban.slice(-4) };
      payouts.set(key, payout);
      return JSON.stringify(payout);
    },
    {
      name: "send_payout",
      description: "Pay money owed to a customer into their bank account. Irreversible: a second person must approve it.",
      schema: z.object({
        customer_id: z.string(),
        amount_cents: z.number().int().positive(),
        iban: z.string().describe("The customer's bank account (IBAN)"),
      }),
    },
  );

  return [
    defineTool(lookupCustomer, { kind: "read" }),
    defineTool(sendPayout, {
      kind: "irreversible",
      // The account number is masked in every event, view and log line; the tool gets it whole.
      sensitive: ["iban"],
      // Four eyes: whoever asked for the payout cannot approve it.
      policy: "approver",
    }),
  ];
}
