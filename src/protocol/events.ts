import { z } from "zod";

/**
 * The seven protocol events, defined once. Server, client and web page import this module so an
 * eighth event cannot appear by accident.
 */
export const EVENT_TYPES = [
  "token",
  "tool_call",
  "tool_result",
  "interrupt",
  "done",
  "error",
  "cancelled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A stream ends with exactly one of these, and nothing follows it. */
export const TERMINAL_TYPES = ["interrupt", "done", "error", "cancelled"] as const;
export type TerminalType = (typeof TERMINAL_TYPES)[number];

export const TOOL_STATUSES = ["ok", "error", "invalid_args", "rejected", "expired", "cancelled"] as const;
export type ToolStatus = (typeof TOOL_STATUSES)[number];

export const DONE_OUTCOMES = ["completed", "max_rounds"] as const;
export const CANCEL_REASONS = ["client", "api", "shutdown"] as const;
/**
 * Codes of the `error` event: the model endpoint failed (`model_error`) or sent no output in time
 * (`model_timeout`), the database could not take the run's writes (`storage_unavailable`: nothing
 * of the failed step was applied, the thread is settled once the database is back), or tollgate
 * failed (`internal_error`, details in its log).
 */
export const RUN_ERROR_CODES = ["model_error", "model_timeout", "storage_unavailable", "internal_error"] as const;
export type RunErrorCode = (typeof RUN_ERROR_CODES)[number];
export type CancelReason = (typeof CANCEL_REASONS)[number];

const base = { run_id: z.string() };

/**
 * Who may decide a pending call: its thread's owner (or an approver); only an approver who is not
 * the owner; or `quorum`: `requires.approvers` distinct principals with `requires.role`, none of
 * them the owner or the requester.
 */
export const APPROVAL_POLICIES = ["owner", "approver", "quorum"] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];

/** What a `quorum` call needs: this many distinct principals with this role (`admin` counts for any). */
export const quorumSchema = z.object({ role: z.string(), approvers: z.number().int().min(1) });
export type Quorum = z.infer<typeof quorumSchema>;

export const pendingCallSchema = z.object({
  call_id: z.string(),
  name: z.string(),
  version: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("1 when the interrupt opens, one more at each edit. An approval or edit of a call above version 1 names it (`decisions[].version`), else `409 call_changed`."),
  /** Sensitive fields masked. */
  args: z.record(z.string(), z.unknown()),
  policy: z.enum(APPROVAL_POLICIES),
  requires: quorumSchema.optional().describe("`quorum` calls: how many distinct principals of which role must approve."),
  approvals: z
    .array(z.object({ by: z.string(), at: z.string() }))
    .optional()
    .describe("`quorum` calls: who approved so far, and when."),
  preview: z.unknown().optional().describe("What the call would do, from its tool's `preview` when the interrupt opened (sensitive output masked); the approval is bound to it."),
  preview_error: z.string().optional().describe("Why the tool's preview could not be shown; the call may still be decided."),
  /** Whether a decision may carry `edited_args` for this call. */
  editable: z.boolean(),
  /** The tool's JSON Schema, for an edit form. */
  args_schema: z.record(z.string(), z.unknown()),
});
export type PendingCall = z.infer<typeof pendingCallSchema>;

/** What a graph asked people with its own `interrupt(value)`: answered on resume with `answers`. */
export const graphQuestionSchema = z.object({
  question_id: z.string().describe("LangGraph's interrupt id: name it in the resume's `answers`."),
  value: z.unknown().describe("What the graph passed to `interrupt()`, secrets scrubbed."),
});

export const interruptPayloadSchema = z.object({
  thread_id: z.string(),
  interrupt_id: z.string(),
  calls: z.array(pendingCallSchema),
  // Events stored before graphs could ask questions have none.
  questions: z.array(graphQuestionSchema).default([]).describe("Questions the graph asked with its own interrupt(); empty unless it did."),
  expires_at: z.string(),
  resume_url: z.string(),
});
export type InterruptPayload = z.infer<typeof interruptPayloadSchema>;

export const tokenEventSchema = z.object({ type: z.literal("token"), ...base, text: z.string() });
export const toolCallEventSchema = z.object({
  type: z.literal("tool_call"),
  ...base,
  call_id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  needs_approval: z.boolean(),
});
export const toolResultEventSchema = z.object({
  type: z.literal("tool_result"),
  ...base,
  call_id: z.string(),
  name: z.string(),
  status: z.enum(TOOL_STATUSES),
  output: z.string().optional(),
  error: z.string().optional(),
  /** The call ran with arguments a person edited before approving. */
  edited: z.boolean().optional(),
});
export const interruptEventSchema = interruptPayloadSchema.extend({
  type: z.literal("interrupt"),
  ...base,
});
export const doneEventSchema = z.object({
  type: z.literal("done"),
  ...base,
  outcome: z.enum(DONE_OUTCOMES),
  message: z.string(),
});
export const errorEventSchema = z.object({
  type: z.literal("error"),
  ...base,
  code: z.enum(RUN_ERROR_CODES),
  message: z.string(),
});
export const cancelledEventSchema = z.object({
  type: z.literal("cancelled"),
  ...base,
  reason: z.enum(CANCEL_REASONS),
});

export const protocolEventSchema = z.discriminatedUnion("type", [
  tokenEventSchema,
  toolCallEventSchema,
  toolResultEventSchema,
  interruptEventSchema,
  doneEventSchema,
  errorEventSchema,
  cancelledEventSchema,
]);

/** One protocol event as the server emits it and the client yields it. */
export type ProtocolEvent = z.infer<typeof protocolEventSchema>;
export type EventOf<T extends EventType> = Extract<ProtocolEvent, { type: T }>;
export type TerminalEvent = EventOf<TerminalType>;

/** A protocol event before the run stamps it with its run id. */
export type EventBody = ProtocolEvent extends infer E ? (E extends ProtocolEvent ? Omit<E, "run_id"> : never) : never;

export function isTerminal(e: { type: EventType }): e is TerminalEvent {
  return (TERMINAL_TYPES as readonly string[]).includes(e.type);
}
