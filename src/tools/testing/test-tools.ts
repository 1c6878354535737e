import { tool } from "@langchain/core/tools";
import type { Database } from "better-sqlite3";
import { z } from "zod";
import { abortableSleep } from "../../lib/index.js";
import { callIdOf, type DemoTables, sqliteDemoTables } from "../demo/demo-tables.js";
import { defineTool, type TollgateTool } from "../tollgate-tool.js";
import { toolContext } from "../tool-context.js";

/**
 * Tools that only tests and benchmarks serve (the test server's TOLLGATE_TEST_TOOLS=1, test/helpers/test-server.ts): a read-only tool that
 * throws, an irreversible refund that takes its time, so cancels and crashes can land mid-call,
 * two tools whose errors quote a sensitive argument, and a payment two of finance approve whose
 * sensitive account may be edited while it waits.
 * On the demo tables of a SQLite database (`setupDemoTables` made them).
 */
export function createTestTools(db: Database): TollgateTool[] {
  return createTestToolsOn(sqliteDemoTables(db));
}

/** The test tools on demo tables already set up (`sqliteDemoTables`, `postgresDemoTables`). */
export function createTestToolsOn(tables: DemoTables): TollgateTool[] {
  const explode = tool(
    async ({ message }) => {
      throw new Error(message);
    },
    { name: "explode", description: "Always fails (test tool).", schema: z.object({ message: z.string() }) },
  );
  const slowRefund = tool(
    async ({ order_id, amount_cents, delay_ms }, config) => {
      const ctx = toolContext(config);
      await abortableSleep(delay_ms, ctx.signal);
      // The refund checks the signal inside its write transaction, as refund_order does.
      await tables.addRefund({ order_id, amount_cents, reason: "slow refund", call_id: callIdOf(ctx.idempotencyKey) }, ctx.signal);
      return JSON.stringify({ order_id, amount_cents });
    },
    {
      name: "slow_refund",
      description: "Refund that waits delay_ms before committing (test tool).",
      schema: z.object({ order_id: z.string(), amount_cents: z.number().int().positive(), delay_ms: z.number().int().min(0) }),
    },
  );
  return [defineTool(explode, { kind: "read" }), defineTool(slowRefund, { kind: "irreversible" }), ...toolsQuotingIban(), payVendorTool(tables)];
}

/**
 * A payment two of finance approve, to an account that is sensitive and may be edited while the
 * call waits: it records the payment in the outbox (`to` = the account), so a test reads what ran.
 */
function payVendorTool(tables: DemoTables): TollgateTool {
  const payVendor = tool(
    async ({ account, amount_cents }, config) => {
      const ctx = toolContext(config);
      await tables.addEmail({ to: account, subject: "payment", body: String(amount_cents), call_id: callIdOf(ctx.idempotencyKey) }, ctx.signal);
      return JSON.stringify({ paid: amount_cents });
    },
    { name: "pay_vendor", description: "Pays a vendor's account (test tool).", schema: z.object({ account: z.string(), amount_cents: z.number().int().positive() }) },
  );
  return defineTool(payVendor, { kind: "irreversible", sensitive: ["account"], editable: true, policy: { role: "finance", approvers: 2 } });
}

/**
 * A read tool and an irreversible one (with a preview) whose errors quote their sensitive `iban`,
 * as a bank's refusal would: what people see of those errors must not show it.
 */
function toolsQuotingIban(): TollgateTool[] {
  const schema = z.object({ iban: z.string(), amount_cents: z.number().int().positive() });
  const checkIban = tool(
    async ({ iban }) => {
      throw new Error(`no bank knows ${iban}`);
    },
    { name: "check_iban", description: "Always fails, quoting its IBAN (test tool).", schema },
  );
  const wireTransfer = tool(
    async ({ iban }) => {
      throw new Error(`bank refused transfer to ${iban}`);
    },
    { name: "wire_transfer", description: "Always refused, quoting its IBAN (test tool).", schema },
  );
  const previewFails = (args: Record<string, unknown>) => {
    throw new Error(`cannot preview the account ${String(args.iban)}`);
  };
  return [
    defineTool(checkIban, { kind: "read", sensitive: ["iban"] }),
    defineTool(wireTransfer, { kind: "irreversible", sensitive: ["iban"], preview: previewFails }),
  ];
}
