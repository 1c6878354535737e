import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { defineTool, throwIfAborted, toolContext, type TollgateTool } from "../tollgate-tool.js";
import { callIdOf, type DbSource, prepared } from "./demo-tables.js";

/** Irreversible: puts an email in the outbox. */
export function sendEmailTool(db: DbSource): TollgateTool {
  const q = prepared(db, (d) => ({
    insert: d.prepare('INSERT INTO outbox ("to", subject, body, call_id, created_at) VALUES (?, ?, ?, ?, ?)'),
    transaction: <T>(fn: () => T) => d.transaction(fn),
  }));
  const t = tool(
    async ({ to, subject, body }, config) => {
      const ctx = toolContext(config);
      const { insert, transaction } = q();
      const id = transaction(() => {
        throwIfAborted(ctx.signal);
        return insert.run(to, subject, body, callIdOf(ctx.idempotencyKey), new Date().toISOString()).lastInsertRowid;
      })();
      return JSON.stringify({ message_id: Number(id), to, subject });
    },
    {
      name: "send_email",
      description: "Send an email to a customer. Irreversible: a person must approve it.",
      schema: z.object({ to: z.email(), subject: z.string(), body: z.string() }),
    },
  );
  // The requester may approve their own email, and fix its wording first. Recipient and body are
  // personal data: masked wherever people or logs see the call or its result.
  return defineTool(t, {
    kind: "irreversible",
    policy: "owner",
    editable: true,
    sensitive: ["to", "body"],
    sensitiveOutput: ["to"],
  });
}
