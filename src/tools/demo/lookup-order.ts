import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { defineTool, type TollgateTool } from "../tollgate-tool.js";
import { type DbSource, type OrderRow, prepared } from "./demo-tables.js";

/** Read-only: the order with what has been refunded so far. */
export function lookupOrderTool(db: DbSource): TollgateTool {
  const q = prepared(db, (d) => ({
    order: d.prepare<[string], OrderRow>("SELECT * FROM orders WHERE order_id = ?"),
    refunded: d.prepare<[string], { total: number }>(
      "SELECT COALESCE(SUM(amount_cents), 0) AS total FROM refunds WHERE order_id = ?",
    ),
  }));
  const t = tool(
    async ({ order_id }) => {
      const { order, refunded } = q();
      const row = order.get(order_id);
      if (!row) throw new Error(`Order ${order_id} not found`);
      return JSON.stringify({
        order_id: row.order_id,
        status: row.status,
        total_cents: row.total_cents,
        refunded_cents: refunded.get(order_id)!.total,
        customer_email: row.customer_email,
      });
    },
    {
      name: "lookup_order",
      description: "Look up an order by id: status, total, amount refunded so far, customer email.",
      schema: z.object({ order_id: z.string().describe("Order id, e.g. A-1001") }),
    },
  );
  // The customer's address is personal data: the model reads it, people and logs see it masked.
  return defineTool(t, { kind: "read", sensitiveOutput: ["customer_email"] });
}
