import { z } from "zod";
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from "./errors.js";
import { interruptPayloadSchema, pendingCallSchema, TOOL_STATUSES } from "./events.js";
import {
  AUDIT_DECISIONS,
  DECISION_VIAS,
  type ApprovalList,
  type AuditTrail,
  type Me,
  type ThreadList,
  type ThreadView,
  type GraphList,
} from "./resources.js";

/**
 * The response bodies of the API as zod schemas, for the OpenAPI document and for anyone who wants
 * to check a response. The interfaces in resources.ts stay the types the code uses; the
 * assertions at the bottom fail to compile when a schema and its interface drift apart.
 */

export const errorBodySchema = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
  }),
});

export const threadStatusSchema = z.enum(["idle", "running", "waiting_human"]);
export const lastOutcomeSchema = z
  .enum(["completed", "max_rounds", "cancelled", "error", "expired"])
  .nullable()
  .describe("How the latest finished run ended; null before any. A run that stops at the gate leaves it unchanged.");

export const createdThreadSchema = z.object({ thread_id: z.string(), graph_id: z.string(), status: z.literal("idle") });

export const threadMessageSchema = z.object({
  role: z.enum(["user", "assistant", "tool"]),
  content: z.string(),
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()) })).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  status: z.enum(TOOL_STATUSES).optional(),
  edited: z.boolean().optional(),
});

const graphIdField = z.string().describe("The graph the thread runs, for life (`GET /graphs`).");

export const threadViewSchema = z.object({
  thread_id: z.string(),
  graph_id: graphIdField,
  status: threadStatusSchema,
  last_outcome: lastOutcomeSchema,
  owner: z.string().describe("The owning principal's `sub` (`anonymous` without auth)."),
  messages: z.array(threadMessageSchema),
  pending: interruptPayloadSchema.nullable().describe("The open interrupt, as its `interrupt` event carried it; null when none is open."),
});

export const threadSummarySchema = z.object({
  thread_id: z.string(),
  graph_id: graphIdField,
  status: threadStatusSchema,
  last_outcome: lastOutcomeSchema,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  title: z.string().nullable().describe("The start of the first user message, masked; null before any."),
});

export const threadListSchema = z.object({ items: z.array(threadSummarySchema), next_cursor: z.string().nullable().describe("Pass as `?cursor=` for the next page; null on the last.") });

export const graphListSchema = z.object({
  items: z.array(z.object({ graph_id: z.string(), description: z.string().nullable() })),
});

export const meSchema = z.object({ sub: z.string(), roles: z.array(z.string()) });

export const approvalListSchema = z.object({
  items: z.array(
    z.object({
      thread_id: z.string(),
      interrupt_id: z.string(),
      calls: z.array(pendingCallSchema),
      expires_at: z.string(),
      requested_by: z.string(),
      escalated: z.boolean().describe("It has waited past its escalation time (`approval.escalated` was sent)."),
    }),
  ),
});

export const auditEntrySchema = z.object({
  at: z.iso.datetime(),
  interrupt_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  args_hash: z.string().describe("HMAC-SHA256 of the call's arguments (sorted-key JSON) under a per-deployment key."),
  decision: z.enum(AUDIT_DECISIONS),
  by: z.string().nullable().describe("The deciding principal's `sub`; null for the system (expiry)."),
  reason: z.string().nullable(),
  via: z.enum(DECISION_VIAS).optional().describe("How a person's decision came: `api`, `langgraph`, `slack` or `email`; absent for the system's (expiry)."),
  channel_user: z.string().optional().describe("The channel's own id of who decided (the Slack user id), where there is one."),
  edited_args_hash: z.string().optional(),
  version: z.number().int().min(1).optional().describe("The call's version the decision was taken on (1 until someone edits it)."),
  preview_hash: z.string().optional().describe("Keyed hash of the call's preview as the person was shown it: what they approved."),
  executed: z
    .object({ status: z.enum([...TOOL_STATUSES, "unknown"]), at: z.iso.datetime() })
    .optional()
    .describe("From the execution ledger: how the call ran (`unknown`: started, no outcome recorded); absent if it never started."),
});

export const auditTrailSchema = z.object({ thread_id: z.string(), entries: z.array(auditEntrySchema) });

export const cancelResultSchema = z.object({
  thread_id: z.string(),
  cancelled: z.boolean().describe("Whether there was a run or an open interrupt to stop."),
  status: threadStatusSchema,
});

export const resumeAcceptedSchema = z.union([
  z.object({ run_id: z.string() }),
  z
    .object({ status: z.literal("waiting_human"), waiting_on: z.array(z.string()), run_id: z.null() })
    .describe("Decisions taken call by call (an interrupt with a quorum call): these calls still wait, and no run started."),
]);

export const healthSchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), checks: z.record(z.string(), z.string()) }),
]);

// Compile-time: each schema describes exactly its interface (both directions).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_: T) => _;
same<Same<z.infer<typeof errorBodySchema>, ErrorBody>>(true);
same<Same<z.infer<typeof threadViewSchema>, ThreadView>>(true);
same<Same<z.infer<typeof threadListSchema>, ThreadList>>(true);
same<Same<z.infer<typeof meSchema>, Me>>(true);
same<Same<z.infer<typeof graphListSchema>, GraphList>>(true);
same<Same<z.infer<typeof approvalListSchema>, ApprovalList>>(true);
same<Same<z.infer<typeof auditTrailSchema>, AuditTrail>>(true);
