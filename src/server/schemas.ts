import { z } from "zod";
import { RESERVED_ARG_NAMES } from "../tools/index.js";

export const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;
export const MAX_MESSAGE_BYTES = 32 * 1024;

export const threadIdSchema = z.string().regex(THREAD_ID, "thread_id must match [A-Za-z0-9_-]{1,128}");

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

/**
 * Reserved names are checked on the parsed JSON's own keys, before the record is built: zod drops
 * an own `__proto__` from its output, so the edit would otherwise run as a plain approval.
 */
const editedArgs = z.preprocess((raw, ctx) => {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    for (const key of Object.keys(raw)) {
      if (RESERVED_ARG_NAMES.has(key)) ctx.issues.push({ code: "custom", message: `'${key}' can never be an argument name`, input: raw, path: [key] });
    }
  }
  return raw;
}, z.record(z.string(), z.unknown()));

export const resumeBody = z.object({
  interrupt_id: z.string().min(1, "interrupt_id is required"),
  decisions: z.array(
    z
      .object({
        call_id: z.string().min(1),
        approved: z.boolean(),
        reason: z.string().max(2000).optional().describe("Told to the model as `Rejected: <reason>`; default `User denied`."),
        edited_args: editedArgs
          .optional()
          .describe("Only with `approved: true`, for an editable call: top-level keys that replace the call's arguments."),
      })
      .refine((d) => d.edited_args === undefined || d.approved, "edited_args is only allowed with approved: true"),
  )
    .refine((ds) => new Set(ds.map((d) => d.call_id)).size === ds.length, "two decisions name the same call_id")
    .describe("At most one per pending call; a pending call with none is rejected (`no decision`)."),
  answers: z
    .array(
      z.object({
        question_id: z.string().min(1).max(200),
        value: z.unknown().describe("What the graph's interrupt() returns to its node: any JSON."),
      }),
    )
    .refine((as) => new Set(as.map((a) => a.question_id)).size === as.length, "two answers name the same question_id")
    .optional()
    .describe("One per question of the interrupt (`questions`): all of them, else 400. Only the thread's owner (or an admin) answers."),
  on_disconnect: onDisconnect,
});
