import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { closePendingCalls, closingOutcomes, type MessagesState, readGateState, runInputOf, unansweredCalls } from "../../graph/index.js";
import { ModelCallError } from "../../model/index.js";
import type { EventBody } from "../../protocol/index.js";
import { type InterruptCall, type InterruptQuestion, type InterruptRecord, type NewInterrupt, isStorageFault, type StoreOps } from "../../store/index.js";
import { interruptPayload } from "../decide/interrupt-payload.js";
import { hashArgs, type ToolOutcome } from "../../tools/index.js";
import { toolResultEvent } from "../start/adapter.js";
import { enqueueApprovalWebhook } from "../decide/approval-webhooks.js";
import { takePreviews } from "../start/previews.js";
import { cancelReasonOf, RunCancelled } from "../run-abort.js";
import type { ActiveRun, RunContext } from "../run-context.js";

/** How the graph's stream ended: its last state, and whether it stopped at the gate. */
export interface GraphEnd {
  values: MessagesState | undefined;
  interrupted: boolean;
  /** The tool calls this run's AI messages made, by id, with their real arguments. */
  calls: Map<string, ToolCall>;
}

const RUN_FAILED: ToolOutcome = closingOutcomes.runFailed();

/**
 * The run no longer holds its thread: another replica took it over (this one lost the database
 * for longer than its lease), or the run's end committed though the database's answer was lost.
 * Nothing more may be written for the run; whoever holds the thread ends it.
 */
export class ThreadLost extends Error {
  override name = "ThreadLost";
}

/** A served graph did something tollgate cannot serve; the message says what, for the client too. */
export class GraphRefused extends Error {
  override name = "GraphRefused";
}

export async function finishNormally(ctx: RunContext, run: ActiveRun, end: GraphEnd): Promise<string> {
  let { values } = end;
  let gated: ToolCall[] = [];
  let questions: InterruptQuestion[] = [];
  let hitl = new Map<string, NonNullable<InterruptCall["hitl"]>>();
  if (values && end.interrupted && run.graph.gate === "static") {
    // The built-in agent stops before `call_tool`: its calls are in the state the run ended with.
    gated = unansweredCalls(values.messages).filter((c) => ctx.registry.needsApproval(c.name));
  } else if (!values || end.interrupted) {
    // No step ran (nothing was pending), or a graph paused itself, maybe in a subgraph: read where it stands.
    const at = await readGateState(run.graph, run.threadId);
    values ??= { messages: at.messages };
    if (at.unmatched.length) {
      throw new GraphRefused(`Graph '${run.graph.id}' paused at a HITL middleware interrupt whose requests match no tool call of its last AI message`);
    }
    hitl = new Map(at.hitl.flatMap((h) => h.calls.map((c) => [c.call_id, { interrupt_id: h.interrupt_id, allowed: c.allowed }] as const)));
    // Kept as people will see them: secrets scrubbed (the graph reads the answers, not these).
    questions = at.questions.map((q) => ({ question_id: q.question_id, value: ctx.redactor.scrubber.scrubDeep(q.value) }));
    // The real arguments where this run made the call (the checkpoint has them scrubbed of secrets).
    gated = at.calls.map((c) => end.calls.get(c.id!) ?? c);
  }
  if (gated.length || questions.length) {
    // A cancel that landed while the run was stopping at the gate still wins: no interrupt opens.
    if (run.controller.signal.aborted) return finishCancelled(ctx, run);
    const unknown = gated.find((c) => !ctx.registry.get(c.name));
    if (unknown) {
      throw new GraphRefused(`Graph '${run.graph.id}' asks approval for tool '${unknown.name}', which this server does not know: pass it in createTollgate({ tools })`);
    }
    // A rejection is carried out by the tool itself (see resume-gate): only an irreversible TollgateTool can.
    const ungated = gated.find((c) => hitl.has(c.id!) && !ctx.registry.needsApproval(c.name));
    if (ungated) {
      throw new GraphRefused(`Graph '${run.graph.id}' asks approval for '${ungated.name}', which is not an irreversible tool: make it with defineTool(tool, { kind: "irreversible" })`);
    }
    // What each call would do, for the people deciding it; a cancel meanwhile still wins.
    const previews = await takePreviews(ctx, run, gated);
    if (run.controller.signal.aborted) return finishCancelled(ctx, run);
    const now = ctx.clock.now();
    const record: NewInterrupt = {
      interrupt_id: randomUUID(),
      thread_id: run.threadId,
      run_id: run.runId,
      calls: gated.map((c) => {
        const shown = ctx.registry.pendingCall({ id: c.id!, name: c.name, args: c.args });
        const asked = hitl.get(c.id!);
        return {
          ...shown,
          // The middleware's own limits: no edit where it allows none.
          ...(asked ? { hitl: asked, editable: shown.editable && asked.allowed.includes("edit") } : {}),
          // Kept as people see them (masked, scrubbed): the hashes bind the real ones.
          args: ctx.redactor.scrubber.scrubDeep(shown.args),
          args_hash: hashArgs(c.args),
          audit_hash: ctx.store.audit.hash(c.args),
          version: 1,
          ...previews.get(c.id!),
        };
      }),
      questions,
      created_at: now,
      ...deadlines(ctx, gated, now),
      requester: run.requester,
    };
    const event: EventBody = { type: "interrupt", ...interruptPayload(record) };
    await commitEnd(ctx, run, {
      terminal: event,
      outcome: "interrupted",
      writeState: async (tx) => {
        await tx.interrupts.create(record);
        if (!(await tx.threads.release(run.threadId, run.runId, { to: "waiting_human", lastOutcome: null, openInterruptId: record.interrupt_id }))) return false;
        await enqueueApprovalWebhook(ctx, tx, { record, type: "approval.requested", at: record.created_at });
        return true;
      },
    });
    return "interrupted";
  }
  const last = values.messages.at(-1);
  const closed = (values as { closed?: unknown }).closed === true;
  const outcome = last && ToolMessage.isInstance(last) && !closed ? "max_rounds" : "completed";
  await commitEnd(ctx, run, {
    terminal: { type: "done", outcome, message: lastAssistantText(values.messages) },
    outcome,
    writeState: (tx) => tx.threads.release(run.threadId, run.runId, { to: "idle", lastOutcome: outcome }),
  });
  return outcome;
}

export async function finishCancelled(ctx: Pick<RunContext, "settings" | "store">, run: ActiveRun): Promise<string> {
  await closeCalls(ctx, run, closingOutcomes.cancelled());
  await commitEnd(ctx, run, {
    terminal: { type: "cancelled", reason: cancelReasonOf(run.controller.signal) },
    outcome: "cancelled",
    writeState: (tx) => tx.threads.release(run.threadId, run.runId, { to: "idle", lastOutcome: "cancelled" }),
  });
  return "cancelled";
}

export async function finishFailed(ctx: RunContext, run: ActiveRun, err: unknown): Promise<string> {
  // A decision must not be used up by a write that failed: the settler reopens the interrupt if
  // no approved call started (and closes it as below otherwise).
  if (run.resume && isStorageFault(err)) throw err;
  if (err instanceof ModelCallError) ctx.metrics.modelError(err.code); // here, once: describeFailure may run twice
  const failure = describeFailure(ctx, run, err);
  await closeCalls(ctx, run, RUN_FAILED);
  await commitEnd(ctx, run, {
    terminal: failure,
    outcome: "error",
    writeState: (tx) => tx.threads.release(run.threadId, run.runId, { to: "idle", lastOutcome: "error" }),
  });
  return "error";
}

/**
 * The run could not end by itself (the database refused its last writes): its listeners get their
 * terminal event now, from memory, and the settler writes that same event, answers the calls left
 * open and releases the thread once the database takes writes again. Never rejects.
 */
export async function failClosed(ctx: RunContext, run: ActiveRun, err: unknown): Promise<void> {
  try {
    detach(ctx, run);
    const terminal = run.log.isEnded ? undefined : run.log.endUnstored(describeFailure(ctx, run, err));
    await ctx.settler.adopt({
      threadId: run.threadId,
      holderId: run.runId,
      fallback: RUN_FAILED,
      terminal,
      reopen: isStorageFault(err) ? run.resume : undefined,
    });
  } catch (last) {
    ctx.log.error("could not hand a failed run to the settler", { run_id: run.runId, thread_id: run.threadId, err: last });
  }
}

/**
 * Drops the run from this process's maps (its log stays followable until the settler has written
 * its end), and reports how it ended: one log line and the metrics, once per run.
 */
export function forget(ctx: Pick<RunContext, "inFlight" | "log" | "metrics" | "settler">, run: ActiveRun, outcome: string): void {
  detach(ctx, run);
  run.outcome = outcome;
  if (!ctx.settler.holdsRun(run.runId)) ctx.inFlight.retire(run.runId);
  ctx.metrics.runEnded(outcome);
  const cancel = run.controller.signal.reason;
  if (outcome === "cancelled" && cancel instanceof RunCancelled) ctx.metrics.cancelled(performance.now() - cancel.at);
  ctx.log.info("run finished", { thread_id: run.threadId, run_id: run.runId, principal: run.principal, outcome });
}

/** How a run ends: its terminal event, the outcome its row keeps, and the state change with it. */
interface RunEnd {
  terminal: EventBody;
  outcome: string;
  /** Writes the thread's new state; false when the run no longer holds the thread. */
  writeState: (tx: StoreOps) => Promise<boolean>;
}

/**
 * Ends the run: the state change, the terminal event and the closed run row are one transaction,
 * so no crash or refused write can leave a released thread whose log has no end, or an end
 * without the state it reports. Throws (nothing written, nothing published) if the database refuses.
 */
async function commitEnd(ctx: Pick<RunContext, "settings" | "store">, run: ActiveRun, end: RunEnd): Promise<void> {
  const { terminal, outcome, writeState } = end;
  // The run stays registered until its end is committed: a cancel arriving meanwhile waits for
  // it, then closes the interrupt it may have opened.
  await run.log.end(terminal, (events) =>
    ctx.store.transaction(async (tx) => {
      // Not held any more: another replica took the thread over (this one was cut off from the
      // database past its lease) and has ended the run; nothing here may be written.
      if (!(await writeState(tx))) throw new ThreadLost(`run ${run.runId} no longer holds thread ${run.threadId}`);
      await tx.runs.append(run.runId, events);
      await tx.runs.end(run.runId, outcome);
      await tx.runs.prune(run.threadId, ctx.settings.eventRetentionRuns);
    }),
  );
}

/** The `error` event for a failure, logged once with the run id. */
function describeFailure(ctx: RunContext, run: ActiveRun, err: unknown): Extract<EventBody, { type: "error" }> {
  if (err instanceof ThreadLost) {
    ctx.log.warn("run stopped: its thread was taken over", { run_id: run.runId, thread_id: run.threadId });
    return { type: "error", code: "storage_unavailable", message: "This server lost the database for a while; another one closed this run" };
  }
  if (err instanceof GraphRefused) {
    ctx.log.warn("graph refused", { thread_id: run.threadId, run_id: run.runId, graph_id: run.graph.id, message: err.message });
    return { type: "error", code: "internal_error", message: err.message };
  }
  if (err instanceof ModelCallError) {
    ctx.log.warn("model call failed", { thread_id: run.threadId, run_id: run.runId, code: err.code, message: err.message });
    return { type: "error", code: err.code, message: err.message };
  }
  if (isStorageFault(err)) {
    ctx.log.warn("run stopped: database unavailable", { run_id: run.runId, thread_id: run.threadId, message: (err as Error).message });
    return { type: "error", code: "storage_unavailable", message: "The database is unavailable; nothing of the failed step was applied" };
  }
  ctx.log.error("run failed", { run_id: run.runId, thread_id: run.threadId, err });
  return { type: "error", code: "internal_error", message: `Internal error in run ${run.runId}; see the server log` };
}

/** Answers calls the cut-off step left open, and tells the stream how each ended. */
async function closeCalls(ctx: Pick<RunContext, "store">, run: ActiveRun, fallback: ToolOutcome): Promise<void> {
  // The history is written only by whoever holds the thread: after a takeover, that is not us.
  const t = await ctx.store.threads.get(run.threadId);
  if (!(t?.status === "running" && t.holder_id === run.runId && t.replica_id === ctx.store.replicas.id)) {
    throw new ThreadLost(`run ${run.runId} no longer holds thread ${run.threadId}`);
  }
  // A message run whose graph never saved (stopped before it began, or its save refused) keeps
  // the user's message all the same: it is in the run row.
  const input = runInputOf(await ctx.store.runs.get(run.runId));
  const messages = await closePendingCalls(run.graph, { ledger: ctx.store.ledger, threadId: run.threadId, fallback, input });
  for (const m of messages) run.log.append(toolResultEvent(m));
}

/** Stops cancels from reaching a run that is about to hand the thread back. */
function detach(ctx: Pick<RunContext, "inFlight">, run: ActiveRun): void {
  if (ctx.inFlight.active.get(run.threadId) === run) ctx.inFlight.active.delete(run.threadId);
}

function lastAssistantText(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (AIMessage.isInstance(m)) return m.text;
  }
  return "";
}

/**
 * An interrupt's deadline, its opening time plus the smallest approval window of its calls (a
 * tool's own, or APPROVAL_TTL_SECONDS); and when it is escalated, by the soonest of theirs.
 */
function deadlines(ctx: RunContext, calls: readonly { name: string }[], now: number): { expires_at: number; escalate_at: number | null } {
  const { approvalTtlMs, approvalEscalateMs } = ctx.settings;
  const ttl = Math.min(approvalTtlMs, ...calls.map((c) => ctx.registry.ttlMsOf(c.name) ?? approvalTtlMs));
  const escalations = calls.map((c) => ctx.registry.escalateMsOf(c.name) ?? approvalEscalateMs).filter((ms) => ms !== undefined);
  const escalateAfter = escalations.length ? Math.min(...escalations) : approvalEscalateMs;
  return { expires_at: now + ttl, escalate_at: escalateAfter === undefined ? null : now + escalateAfter };
}
