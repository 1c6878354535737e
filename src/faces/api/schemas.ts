import { z } from "zod";
import { resumeSchema } from "../../gate/index.js";
import { threadIdSchema } from "../../http/index.js";

export const MAX_MESSAGE_BYTES = 32 * 1024;

export const MAX_METADATA_BYTES = 8 * 1024;

/** Graph ids, as `GET /graphs` lists them. */
export const graphIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "graph_id must match [A-Za-z0-9_-]{1,64}")
  .optional()
  .describe("The graph a new thread runs (`GET /graphs`); default `agent` if served, else the only one. A thread keeps its graph: another one is `409 graph_mismatch`.");

export const createThreadBody = z.object({
  thread_id: threadIdSchema.optional(),
  graph_id: graphIdSchema,
  // Nesting is bounded for every body (parseBody); the size here, before it is ever stored.
  metadata: z
    .record(z.string(), z.unknown())
    .refine((m) => Buffer.byteLength(JSON.stringify(m), "utf8") <= MAX_METADATA_BYTES, "metadata is larger than 8 KiB")
    .optional()
    .describe("Any JSON object kept with the thread: at most 8 KiB, 32 levels deep."),
});

/** `GET /threads?limit=&cursor=`. */
export const listThreadsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(1024).optional(),
});

const onDisconnect = z
  .enum(["cancel", "continue"])
  .optional()
  .describe("When the client goes away: `cancel` (default) stops the run, `continue` lets it finish.");

export const runBody = z.object({
  message: z
    .string({ error: "message is required" })
    .refine((m) => m.trim().length > 0, "message must not be empty")
    .refine((m) => Buffer.byteLength(m, "utf8") <= MAX_MESSAGE_BYTES, "message is larger than 32 KiB")
    .describe("The user's message: not blank, at most 32 KiB of UTF-8."),
  on_disconnect: onDisconnect,
  graph_id: graphIdSchema,
});

export const resumeBody = resumeSchema.extend({ on_disconnect: onDisconnect });
