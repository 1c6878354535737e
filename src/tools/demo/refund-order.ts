import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { defineTool, throwIfAborted, toolContext, type TollgateTool } from "../tollgate-tool.js";
import { callIdOf, type DbSource, prepared } from "./demo-tables.js";

/** Irreversible: records a refund. The write checks the abort signal inside its transaction. */
export function refundOrderTool(db: DbSource): TollgateTool {
  const q = prepared(db, (d) => ({
    insert: d.prepare("INSERT INTO refunds (order_id, amount_cents, reason, call_id, created_at) VALUES (?, ?, ?, ?, ?)"),
    exists: d.prepare<[string], { order_id: string }>("SELECT order_id FROM orders WHERE order_id = ?"),
    transaction: <T>(fn: () => T) => d.transaction(fn),
  }));
  const t = tool(
    async ({ order_id, amount_cents, reason }, config) => {
      const ctx = toolContext(config);
      const { insert, exists, transaction } = q();
      if (!exists.get(order_id)) throw new Error(`Order ${order_id} not found`);
      const id = transaction(() => {
        throwIfAborted(ctx.signal);
        return insert.run(order_id, amount_cents, reason, callIdOf(ctx.idempotencyKey), new Date().toISOString())
          .lastInsertRowid;
      })();
      return JSON.stringify({ refund_id: Number(id), order_id, amount_cents });
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
  return defineTool(t, { kind: "irreversible", policy: "approver", editable: true });
}
