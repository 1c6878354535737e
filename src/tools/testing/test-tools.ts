import { tool } from "@langchain/core/tools";
import type { Database } from "better-sqlite3";
import { z } from "zod";
import { callIdOf } from "../demo/demo-tables.js";
import { defineTool, throwIfAborted, toolContext, type TollgateTool } from "../tollgate-tool.js";

/** Resolves after `ms`, or rejects when the signal fires first. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => (clearTimeout(t), reject(signal!.reason));
    const t = setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Tools that only tests and benchmarks serve (TOLLGATE_TEST_TOOLS=1): a read-only tool that
 * throws, and an irreversible refund that takes its time, so cancels and crashes can land mid-call.
 */
export function createTestTools(db: Database): TollgateTool[] {
  const insert = db.prepare(
    "INSERT INTO refunds (order_id, amount_cents, reason, call_id, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const explode = tool(
    async ({ message }) => {
      throw new Error(message);
    },
    { name: "explode", description: "Always fails (test tool).", schema: z.object({ message: z.string() }) },
  );
  const slowRefund = tool(
    async ({ order_id, amount_cents, delay_ms }, config) => {
      const ctx = toolContext(config);
      await wait(delay_ms, ctx.signal);
      db.transaction(() => {
        throwIfAborted(ctx.signal);
        insert.run(order_id, amount_cents, "slow refund", callIdOf(ctx.idempotencyKey), new Date().toISOString());
      })();
      return JSON.stringify({ order_id, amount_cents });
    },
    {
      name: "slow_refund",
      description: "Refund that waits delay_ms before committing (test tool).",
      schema: z.object({ order_id: z.string(), amount_cents: z.number().int().positive(), delay_ms: z.number().int().min(0) }),
    },
  );
  return [defineTool(explode, { kind: "read" }), defineTool(slowRefund, { kind: "irreversible" })];
}
