import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { TOKEN_SINK_KEY, type TokenSink } from "../../graphs/nodes/agent-node.js";
import type { AgentStateType, AgentUpdate } from "../../graphs/state.js";
import { unansweredCalls } from "../../graphs/tool-messages.js";
import { ModelCallError } from "../model/index.js";
import { hashArgs } from "../tools/index.js";
import { interruptPayload, type InterruptRecord } from "../store/index.js";
import { adaptGraphStream, type GraphChunk, toolResultEvent } from "./adapter.js";
import { closePendingCalls } from "./pending-calls.js";
import { cancelReasonOf } from "./run-abort.js";
import type { ActiveRun, RunContext } from "./run-context.js";

/**
 * Drives one run to exactly one terminal event: streams the graph through the adapter into the
 * run's log, then ends as `interrupt`, `done`, `cancelled` or `error`, and always releases the thread.
 */
export async function executeRun(
  ctx: RunContext,
  run: ActiveRun,
  input: AgentUpdate | null,
  configurable: Record<string, unknown>,
): Promise<void> {
  let outcome = "error";
  try {
    run.controller.signal.throwIfAborted(); // a cancel that landed while the run was starting wins
    // Tokens go straight into the run's log; the graph stream carries node updates and state.
    const tokenSink: TokenSink = (text) => {
      if (!run.log.isEnded) run.log.append({ type: "token", text });
    };
    const stream = await ctx.graph.stream(input, {
      configurable: {
        ...configurable,
        thread_id: run.threadId,
        run_id: run.runId,
        max_rounds: ctx.settings.maxRounds,
        [TOKEN_SINK_KEY]: tokenSink,
      },
      signal: run.controller.signal,
      // `values` (in-memory state after each step) spares a checkpoint read at the end: on a
      // long thread, rebuilding the state is the dearest part of a run.
      streamMode: ["updates", "values"],
      // A round is at most agent → tools → call_tool: let MAX_ROUNDS, not LangGraph's default
      // step limit (25), end a long run.
      recursionLimit: 3 * ctx.settings.maxRounds + 5,
    });
    const end: GraphEnd = { values: undefined, interrupted: false };
    for await (const body of adaptGraphStream(watchEnd(stream as AsyncIterable<GraphChunk>, end), ctx.registry)) {
      run.log.append(body);
    }
    outcome = await finishNormally(ctx, run, end);
  } catch (err) {
    outcome = run.controller.signal.aborted ? await finishCancelled(ctx, run) : await finishFailed(ctx, run, err);
  } finally {
    settle(ctx, run, outcome);
  }
}

/** How the graph's stream ended: its last state, and whether it stopped at the gate. */
interface GraphEnd {
  values: AgentStateType | undefined;
  interrupted: boolean;
}

/** Passes the stream through, noting its final state and whether it stopped at the interrupt. */
async function* watchEnd(chunks: AsyncIterable<GraphChunk>, end: GraphEnd): AsyncGenerator<GraphChunk> {
  for await (const chunk of chunks) {
    const [mode, data] = chunk;
    if (mode === "values") {
      if (data && typeof data === "object" && "messages" in data) end.values = data as AgentStateType;
      continue;
    }
    if (mode === "updates" && data && typeof data === "object" && "__interrupt__" in data) end.interrupted = true;
    yield chunk;
  }
}

async function finishNormally(ctx: RunContext, run: ActiveRun, end: GraphEnd): Promise<string> {
  let { values, interrupted } = end;
  if (!values) {
    // No step ran (nothing was pending): read what the checkpoint says.
    const state = await ctx.graph.getState({ configurable: { thread_id: run.threadId } });
    values = state.values as AgentStateType;
    interrupted = state.next.includes("call_tool");
  }
  if (interrupted) {
    // A cancel that landed while the run was stopping at the gate still wins: no interrupt opens.
    if (run.controller.signal.aborted) return finishCancelled(ctx, run);
    const now = Date.now();
    const record: Omit<InterruptRecord, "status" | "decided_at"> = {
      interrupt_id: randomUUID(),
      thread_id: run.threadId,
      run_id: run.runId,
      calls: unansweredCalls(values.messages)
        .filter((c) => ctx.registry.needsApproval(c.name))
        .map((c) => ({ call_id: c.id!, name: c.name, args: ctx.registry.mask(c.name, c.args), args_hash: hashArgs(c.args) })),
      created_at: now,
      expires_at: now + ctx.settings.approvalTtlMs,
    };
    detach(ctx, run);
    ctx.store.db.transaction(() => {
      ctx.store.interrupts.create(record);
      ctx.store.threads.release(run.threadId, run.runId, "waiting_human", null, record.interrupt_id);
    })();
    run.log.append({ type: "interrupt", ...interruptPayload({ ...record, status: "waiting_human", decided_at: null }) });
    return "interrupted";
  }
  const last = values.messages.at(-1);
  const outcome = last && ToolMessage.isInstance(last) && !values.closed ? "max_rounds" : "completed";
  detach(ctx, run);
  ctx.store.threads.release(run.threadId, run.runId, "idle", outcome);
  run.log.append({ type: "done", outcome, message: lastAssistantText(values.messages) });
  return outcome;
}

async function finishCancelled(ctx: RunContext, run: ActiveRun): Promise<string> {
  await closeCalls(ctx, run, { status: "cancelled", error: "Cancelled: not executed" });
  detach(ctx, run);
  ctx.store.threads.release(run.threadId, run.runId, "idle", "cancelled");
  run.log.append({ type: "cancelled", reason: cancelReasonOf(run.controller.signal) });
  return "cancelled";
}

async function finishFailed(ctx: RunContext, run: ActiveRun, err: unknown): Promise<string> {
  const isModel = err instanceof ModelCallError;
  if (isModel) ctx.log.warn("model call failed", { run_id: run.runId, code: err.code, message: err.message });
  else ctx.log.error("run failed", { run_id: run.runId, thread_id: run.threadId, err });
  await closeCalls(ctx, run, { status: "error", error: "not executed: the run failed" });
  detach(ctx, run);
  ctx.store.threads.release(run.threadId, run.runId, "idle", "error");
  run.log.append(
    isModel
      ? { type: "error", code: err.code, message: err.message }
      : { type: "error", code: "internal_error", message: `Internal error in run ${run.runId}; see the server log` },
  );
  return "error";
}

/** Answers calls the cut-off step left open, and tells the stream how each ended. */
async function closeCalls(ctx: RunContext, run: ActiveRun, fallback: { status: "cancelled" | "error"; error: string }) {
  try {
    const messages = await closePendingCalls(ctx.graph, ctx.store.ledger, run.threadId, fallback);
    for (const m of messages) run.log.append(toolResultEvent(m));
  } catch (err) {
    ctx.log.error("could not close pending calls", { run_id: run.runId, err });
  }
}

/** Stops cancels from reaching a run that is about to hand the thread back. */
function detach(ctx: RunContext, run: ActiveRun): void {
  if (ctx.active.get(run.threadId) === run) ctx.active.delete(run.threadId);
}

/** Whatever happened above, the stream gets its one terminal event and the thread is released. */
function settle(ctx: RunContext, run: ActiveRun, outcome: string): void {
  try {
    detach(ctx, run);
    if (!run.log.isEnded) {
      outcome = "error";
      ctx.store.threads.release(run.threadId, run.runId, "idle", "error");
      run.log.append({ type: "error", code: "internal_error", message: `Internal error in run ${run.runId}; see the server log` });
    }
    run.outcome = outcome;
    ctx.live.delete(run.runId);
    ctx.store.db.transaction(() => {
      ctx.store.runs.end(run.runId, outcome);
      ctx.store.runs.prune(run.threadId, ctx.settings.eventRetentionRuns);
    })();
  } catch (err) {
    ctx.log.error("could not settle run", { run_id: run.runId, err });
  }
}

function lastAssistantText(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (AIMessage.isInstance(m)) return m.text;
  }
  return "";
}
