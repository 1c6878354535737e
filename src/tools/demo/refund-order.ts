import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { defineTool, type TollgateTool } from "../tollgate-tool.js";
import { toolContext } from "../tool-context.js";
import { callIdOf, type DbSource, type DemoTables, demoTablesOf } from "./demo-tables.js";

/** Refunds above this many cents need two approvers of role `finance`. */
export const LARGE_REFUND_CENTS = 50_000;

/** Irreversible: records a refund. The write checks the abort signal inside its transaction. */
export function refundOrderTool(source: DemoTables | DbSource): TollgateTool {
  const tables = demoTablesOf(source);
  const t = tool(
    async ({ order_id, amount_cents, reason }, config) => {
      const ctx = toolContext(config);
      if (!(await tables.order(order_id))) throw new Error(`Order ${order_id} not found`);
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
  });
}
