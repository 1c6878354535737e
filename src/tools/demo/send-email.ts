import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { defineTool, type TollgateTool } from "../tollgate-tool.js";
import { toolContext } from "../tool-context.js";
import { callIdOf, type DbSource, type DemoTables, demoTablesOf } from "./demo-tables.js";

/** Irreversible: puts an email in the outbox. */
export function sendEmailTool(source: DemoTables | DbSource): TollgateTool {
  const tables = demoTablesOf(source);
  const t = tool(
    async ({ to, subject, body }, config) => {
      const ctx = toolContext(config);
      const id = await tables.addEmail({ to, subject, body, call_id: callIdOf(ctx.idempotencyKey) }, ctx.signal);
      return JSON.stringify({ message_id: id, to, subject });
    },
    {
      name: "send_email",
      description: "Send an email to a customer. Irreversible: a person must approve it.",
      schema: z.object({ to: z.email(), subject: z.string(), body: z.string() }),
    },
  );
  // The requester may approve their own email, and fix its wording first. Recipient and body are
  // personal data: masked wherever people or logs see the call or its result. A customer waits on
  // it: someone is told when it has waited five minutes.
  return defineTool(t, {
    kind: "irreversible",
    policy: "owner",
    editable: true,
    escalate_after_seconds: 300,
    sensitive: ["to", "body"],
    sensitiveOutput: ["to"],
  });
}
