import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { StalePreview } from "../stale-preview.js";
import { defineTool, type TollgateTool } from "../tollgate-tool.js";
import { toolContext } from "../tool-context.js";
import { callIdOf, type DbSource, type DemoTables, demoTablesOf } from "./demo-tables.js";

/** What an approver of a refund is shown of its order. */
interface OrderPreview {
  order_id: string;
  status: string;
  total_cents: number;
  refunded_cents: number;
}

const cents = (n: number) => (n / 100).toFixed(2);

/** Refunds above this many cents need two approvers of role `finance`. */
export const LARGE_REFUND_CENTS = 50_000;

/** Irreversible: records a refund. The write checks the abort signal inside its transaction. */
export function refundOrderTool(source: DemoTables | DbSource): TollgateTool {
  const tables = demoTablesOf(source);
  const t = tool(
    async ({ order_id, amount_cents, reason }, config) => {
      const ctx = toolContext(config);
      const order = await tables.order(order_id);
      if (!order) throw new Error(`Order ${order_id} not found`);
      // The approver saw the order as it was: another refund since, and this one is not the one approved.
      const seen = ctx.preview as Partial<OrderPreview> | undefined;
      // An edit to another order: the approver was shown a different one.
      if (seen && seen.order_id !== undefined && seen.order_id !== order_id) throw new StalePreview(`the approval was given on order ${seen.order_id}, not ${order_id}`);
      if (seen && seen.refunded_cents !== order.refunded_cents) {
        throw new StalePreview(`order ${order_id} has had $${cents(order.refunded_cents - (seen.refunded_cents ?? 0))} refunded since this refund was approved`);
      }
      const id = await tables.addRefund({ order_id, amount_cents, reason, call_id: callIdOf(ctx.idempotencyKey) }, ctx.signal);
      return JSON.stringify({ refund_id: id, order_id, amount_cents });
    },
    {
      name: "refund_order",
      description: "Refund part or all of an order. Irreversible: a person must approve it.",
      schema: z.object({
        order_id: z.string(),
        amount_cents: z.number().int().positive(),
        reason: z.string(),
      }),
    },
  );
  // Four eyes: whoever asked for the refund cannot approve it; an approver may correct the amount.
  // Above $500, two people of finance must approve (the demo declares the role: AUTH_ROLES=finance).
  return defineTool(t, {
    kind: "irreversible",
    policy: ({ amount_cents }) => ((amount_cents as number) > LARGE_REFUND_CENTS ? { role: "finance", approvers: 2 } : "approver"),
    editable: true,
    // The order as the approver should see it: what it cost and what has been refunded already.
    preview: async ({ order_id }): Promise<OrderPreview> => {
      const order = await tables.order(String(order_id));
      if (!order) throw new Error(`Order ${String(order_id)} not found`);
      return { order_id: order.order_id, status: order.status, total_cents: order.total_cents, refunded_cents: order.refunded_cents };
    },
  });
}
