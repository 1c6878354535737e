import { z } from "zod";
import type { Principal } from "../../../auth/index.js";
import type { AppDeps } from "../../../http/index.js";
import type { CheckpointSummary } from "../../../graph/index.js";
import { AppError, type ErrorCode, refusals } from "../../../protocol/index.js";
import type { FrameRequest } from "../../../runs/index.js";
import { valuesOf } from "../runs/resources.js";
import type { RunCreate } from "../runs/run-request.js";
import { startRun } from "../runs/run-start.js";
import { MessageIds } from "./message-ids.js";
import { PROTOCOL_CHANNELS, runSeq } from "./protocol-event.js";
import { mayFollow } from "./thread-visibility.js";

/** One command of the thread-centric protocol, as `POST /threads/{id}/commands` takes it. */
export const commandBody = z.object({
  id: z.number().int().nonnegative(),
  method: z.string().min(1).max(100),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type ProtocolCommand = z.infer<typeof commandBody>;

/** `@langchain/protocol`'s error codes a command may answer with. */
type ProtocolErrorCode = "invalid_argument" | "unknown_command" | "no_such_run" | "no_such_subscription" | "permission_denied" | "not_supported" | "unknown_error";

export type CommandAnswer =
  | { type: "success"; id: number; result: Record<string, unknown>; meta: { thread_id: string; applied_through_seq: number } }
  | { type: "error"; id: number | null; error: ProtocolErrorCode; message: string; tollgate?: { code: string } };

/**
 * Codes that stay HTTP statuses (the thread may not be seen, credentials, rate limits, the server
 * going away); every other refusal is a command answer with the nearest protocol code.
 */
const HTTP_CODES: ReadonlySet<ErrorCode> = new Set(["thread_not_found", "unauthorized", "rate_limited", "shutting_down", "overloaded", "storage_unavailable", "invalid_host", "forbidden_origin"]);

const NEAREST: Partial<Record<ErrorCode, ProtocolErrorCode>> = {
  forbidden: "permission_denied",
  state_locked: "permission_denied",
  not_found: "no_such_run",
  not_waiting: "no_such_run",
  unsupported: "not_supported",
  internal_error: "unknown_error",
  model_error: "unknown_error",
};

export interface CommandContext {
  deps: Pick<AppDeps, "runs" | "threads">;
  principal: Principal;
  threadId: string;
}

/**
 * Answers one command. The gate's rules are the run service's, reached as the run-centric API
 * reaches them (`startRun`): this face only turns the protocol's shapes into LangGraph's.
 */
export async function answerCommand(ctx: CommandContext, cmd: ProtocolCommand): Promise<CommandAnswer> {
  const params = cmd.params ?? {};
  try {
    refuseStateWrites(params);
    const result = await dispatch(ctx, cmd.method, params);
    const seq = await appliedThroughSeq(ctx);
    return { type: "success", id: cmd.id, result, meta: { thread_id: ctx.threadId, applied_through_seq: seq } };
  } catch (err) {
    if (err instanceof ProtocolRefusal) return { type: "error", id: cmd.id, error: err.error, message: err.message };
    if (!(err instanceof AppError) || HTTP_CODES.has(err.code)) throw err;
    return errorAnswer(cmd.id, err);
  }
}

/** A refusal with tollgate's code, as a command answers it: the nearest protocol code, and tollgate's. */
export function errorAnswer(id: number, err: AppError): CommandAnswer {
  return { type: "error", id, error: NEAREST[err.code] ?? "invalid_argument", message: err.message, tollgate: { code: err.code } };
}

/** A refusal in the protocol's own terms, with no tollgate code behind it. */
class ProtocolRefusal extends Error {
  constructor(
    readonly error: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

async function dispatch(ctx: CommandContext, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (method) {
    case "run.start":
      return runStart(ctx, params);
    case "input.respond":
      return inputRespond(ctx, params);
    case "state.get":
      return stateGet(ctx, params);
    case "state.listCheckpoints":
      return listCheckpoints(ctx, params);
    case "state.fork":
      return fork(ctx, params);
    case "subscription.subscribe":
      return subscribe(params);
    case "subscription.unsubscribe":
      return {};
    case "agent.getTree":
      return agentTree(ctx);
    case "subscription.reconnect":
      throw new ProtocolRefusal("not_supported", "subscription.reconnect is not supported: reopen the stream with `since`");
    case "input.inject":
      throw new ProtocolRefusal("invalid_argument", "input.inject is refused: a message goes in only through run.start, where the gate sees it");
    default:
      throw new ProtocolRefusal("unknown_command", `Unknown protocol command: ${method.slice(0, 100)}`);
  }
}

/** `update` and `goto` on any command could change state around the gate. */
function refuseStateWrites(params: Record<string, unknown>): void {
  if (params.update != null) throw new ProtocolRefusal("invalid_argument", "update is refused: state is written only by the graph");
  if (params.goto != null) throw new ProtocolRefusal("invalid_argument", "goto is refused: a run cannot jump past the gate");
}

async function runStart(ctx: CommandContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const config = isObject(params.config) ? params.config : {};
  const configurable = isObject(config.configurable) ? config.configurable : {};
  const strategy = params.multitask_strategy ?? params.multitaskStrategy;
  if (strategy != null && strategy !== "reject") throw refusals.onlyRejectStrategy("multitaskStrategy");
  const body: RunCreate = {
    assistant_id: String(params.assistant_id ?? ""),
    input: params.input,
    interrupt_before: params.interrupt_before ?? config.interrupt_before,
    interrupt_after: params.interrupt_after ?? config.interrupt_after,
    ...(configurable.checkpoint_id != null ? { checkpoint_id: configurable.checkpoint_id } : {}),
  };
  if (!body.assistant_id) throw new ProtocolRefusal("invalid_argument", "run.start requires an assistant_id");
  if (isObject(params.input) && "resume" in params.input) throw refusals.resumeByRespond();
  const started = await startThreadRun(ctx, body);
  if ("waitingOn" in started) throw refusals.notADecision("run.start");
  return { run_id: started.run.runId };
}

/**
 * `input.respond`: every decision shape `command.resume` takes, bound to the open interrupt by the
 * gate's one reader, with every rule of `POST …/resume`. A decision on single calls of a quorum
 * interrupt that leaves others open answers `waiting_human`.
 */
async function inputRespond(ctx: CommandContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const resume = resumeOf(params);
  const row = await ctx.deps.threads.row(ctx.principal, ctx.threadId);
  const body: RunCreate = { assistant_id: row.graph_id, command: { resume } };
  const started = await startThreadRun(ctx, body);
  if ("waitingOn" in started) return { status: "waiting_human", waiting_on: started.waitingOn };
  return { run_id: started.run.runId };
}

/**
 * What of the graph's own stream a run started here records for the thread's streams, beside its
 * events: what nodes write (`custom`) and its tasks, a subgraph's too.
 */
const THREAD_FRAMES: FrameRequest = { modes: new Set(["custom", "tasks"]), subgraphs: true };

/** A run of this face: it goes on when its caller goes, and records what the channels carry. */
function startThreadRun(ctx: CommandContext, body: RunCreate) {
  return startRun(ctx.deps, { p: ctx.principal, threadId: ctx.threadId, body, onDisconnect: "continue", frames: THREAD_FRAMES });
}

/** The resume value: tollgate's own form as it is; otherwise LangGraph's map keyed by interrupt id. */
function resumeOf(params: Record<string, unknown>): unknown {
  if (Array.isArray(params.responses)) {
    if (!params.responses.length) throw new ProtocolRefusal("invalid_argument", "input.respond requires at least one response");
    const map: Record<string, unknown> = {};
    for (const r of params.responses) {
      if (!isObject(r) || typeof r.interrupt_id !== "string") throw new ProtocolRefusal("invalid_argument", "input.respond responses entries require an interrupt_id");
      map[r.interrupt_id] = r.response;
    }
    return map;
  }
  if (typeof params.interrupt_id !== "string") throw new ProtocolRefusal("invalid_argument", "input.respond requires an interrupt_id");
  const response = params.response;
  if (isObject(response) && typeof response.interrupt_id === "string") return response;
  return { [params.interrupt_id]: response };
}

async function stateGet(ctx: CommandContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const snapshot = await ctx.deps.threads.snapshot(ctx.principal, ctx.threadId);
  const ids = MessageIds.of(await ctx.deps.runs.feed.runsFrom(ctx.threadId, 0));
  const values: Record<string, unknown> = ids.display(valuesOf(snapshot));
  const keys = Array.isArray(params.keys) ? params.keys.filter((k): k is string => typeof k === "string") : undefined;
  const picked = keys ? Object.fromEntries(Object.entries(values).filter(([k]) => keys.includes(k))) : values;
  return { values: picked, ...(snapshot.checkpoint ? { checkpoint: { id: snapshot.checkpoint.id } } : {}) };
}

async function listCheckpoints(ctx: CommandContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const limit = typeof params.limit === "number" && params.limit > 0 ? Math.min(params.limit, 1000) : 10;
  let listed: CheckpointSummary[];
  if (typeof params.before === "string") {
    listed = (await ctx.deps.threads.history(ctx.principal, ctx.threadId, { limit, before: params.before })).map((p) => p.checkpoint);
  } else {
    // From the head: the head itself, then what came before it.
    const head = (await ctx.deps.threads.snapshot(ctx.principal, ctx.threadId)).checkpoint;
    const past = head && limit > 1 ? await ctx.deps.threads.history(ctx.principal, ctx.threadId, { limit: limit - 1, before: head.id }) : [];
    listed = head ? [head, ...past.map((p) => p.checkpoint)] : [];
  }
  const checkpoints = listed.map((c) => ({ id: c.id, timestamp: c.createdAt ?? "", step: c.step ?? -1, metadata: {} }));
  return { checkpoints };
}

/** A fork is a run from an earlier checkpoint, allowed under the fork rule the run service holds. */
async function fork(ctx: CommandContext, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (typeof params.checkpoint_id !== "string") throw new ProtocolRefusal("invalid_argument", "state.fork requires a checkpoint_id");
  const row = await ctx.deps.threads.row(ctx.principal, ctx.threadId);
  const body: RunCreate = { assistant_id: row.graph_id, input: params.input, checkpoint_id: params.checkpoint_id };
  const started = await startThreadRun(ctx, body);
  if ("waitingOn" in started) throw refusals.notADecision("state.fork");
  return { run_id: started.run.runId, thread_id: ctx.threadId };
}

/** Over HTTP every stream is its own subscription; the command checks the filter and names it. */
function subscribe(params: Record<string, unknown>): Record<string, unknown> {
  const channels = params.channels;
  const known: readonly string[] = PROTOCOL_CHANNELS;
  if (!Array.isArray(channels) || !channels.length || !channels.every((c) => typeof c === "string" && (known.includes(c) || c.startsWith("custom:")))) {
    throw new ProtocolRefusal("invalid_argument", "subscription.subscribe requires channels, each a known channel");
  }
  return { subscription_id: crypto.randomUUID(), replayed_events: 0 };
}

async function agentTree(ctx: CommandContext): Promise<Record<string, unknown>> {
  const row = await ctx.deps.threads.row(ctx.principal, ctx.threadId);
  const status = { running: "running", waiting_human: "interrupted" }[row.status as string] ?? (row.last_outcome === "error" ? "failed" : "completed");
  return { tree: { namespace: [], status, graph_name: row.graph_id } };
}

/**
 * The seq just before the latest run's first event: a stream opened with this `since` after
 * `run.start` or `input.respond` carries exactly the run the command started. On a thread the
 * caller may not see (where only subscribe and unsubscribe succeed) it is 0, as on an id never used.
 */
async function appliedThroughSeq(ctx: CommandContext): Promise<number> {
  if (!(await mayFollow(ctx.deps.runs.feed, ctx.principal, ctx.threadId))) return 0;
  const latest = await ctx.deps.runs.feed.latestRun(ctx.threadId);
  return latest ? runSeq({ ordinal: latest.ordinal, loggedSeq: -1, k: 0 }) - 1 : 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
