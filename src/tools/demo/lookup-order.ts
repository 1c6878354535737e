import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { defineTool, type TollgateTool } from "../tollgate-tool.js";
import { type DbSource, type DemoTables, demoTablesOf } from "./demo-tables.js";

/** Read-only: the order with what has been refunded so far. */
export function lookupOrderTool(source: DemoTables | DbSource): TollgateTool {
  const tables = demoTablesOf(source);
  const t = tool(
    async ({ order_id }) => {
      const row = await tables.order(order_id);
      if (!row) throw new Error(`Order ${order_id} not found`);
      return JSON.stringify({
        order_id: row.order_id,
        status: row.status,
        total_cents: row.total_cents,
        refunded_cents: row.refunded_cents,
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
