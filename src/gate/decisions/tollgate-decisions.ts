import { z } from "zod";
import { RESERVED_ARG_NAMES } from "./reserved-arg-names.js";

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

/** One decision in tollgate's own shape: every face's decisions are held to it before the gate takes them. */
export const decisionSchema = z
  .object({
    call_id: z.string().min(1),
    approved: z.boolean(),
    reason: z.string().max(2000).optional().describe("Told to the model as `Rejected: <reason>`; default `User denied`."),
    edited_args: editedArgs
      .optional()
      .describe("Only with `approved: true`, for an editable call: top-level keys that replace the call's arguments."),
    version: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("The call's version you were shown (`calls[].version`). Needed to approve or edit a call edited since it was asked (version above 1): else `409 call_changed`."),
  })
  .refine((d) => d.edited_args === undefined || d.approved, "edited_args is only allowed with approved: true");

export const decisionsSchema = z
  .array(decisionSchema)
  .refine((ds) => new Set(ds.map((d) => d.call_id)).size === ds.length, "two decisions name the same call_id")
  .describe("At most one per pending call; a pending call with none is rejected (`no decision`). May be left out only when the interrupt holds questions alone.");

export const answersSchema = z
  .array(
    z.object({
      question_id: z.string().min(1).max(200),
      value: z.unknown().describe("What the graph's interrupt() returns to its node: any JSON."),
    }),
  )
  .refine((as) => new Set(as.map((a) => a.question_id)).size === as.length, "two answers name the same question_id")
  .describe("One per question of the interrupt (`questions`): all of them, else 400. Only the thread's owner (or an admin) answers.");

/** A resume in tollgate's own shape, whichever face it came through (LangGraph's are bound to it first). */
export const resumeSchema = z.object({
  interrupt_id: z.string().min(1, "interrupt_id is required"),
  decisions: decisionsSchema.optional(),
  answers: answersSchema.optional(),
});
