import { canonicalJson } from "../gate/index.js";

/*
 * What LangGraph's `Command({ resume })` delivered about one tool call, read back from the
 * checkpoints of the run the tool is called in. Outside a tollgate server that resume is the only
 * record of a person's decision: LangChain's `humanInTheLoopMiddleware` (and any node asking the
 * same way) pauses with `interrupt({ actionRequests, reviewConfigs })` in the step before the tools
 * run and lets an approved call through unchanged, so the tool finds the approval one step back.
 */

/** A decision LangGraph's resume delivered for a call; `undefined` from `resumedDecision`: none approves it. */
export type ResumedDecision =
  | { type: "approve"; /** Argument names an edit changed. */ edited: readonly string[] }
  | { type: "reject"; reason?: string }
  /** The call was asked about, and the resume left it out. */
  | { type: "undecided" };

/** One call as the tool is asked to run it (the gate's `ResumedCall`). */
export interface ResumedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** The slice of a LangGraph checkpointer this reads (`BaseCheckpointSaver`). */
interface Checkpoints {
  getTuple(config: SaverConfig): Promise<CheckpointTuple | undefined>;
  list(config: SaverConfig, options: { before: SaverConfig; limit: number }): AsyncGenerator<CheckpointTuple>;
}

interface SaverConfig {
  configurable?: Record<string, unknown>;
}

interface CheckpointTuple {
  checkpoint: { channel_values?: Record<string, unknown> };
  parentConfig?: SaverConfig;
  pendingWrites?: Array<[string, string, unknown]>;
}

/** LangGraph's `configurable` keys for the run's checkpointer and its channels for interrupts and resumes. */
const CHECKPOINTER_KEY = "__pregel_checkpointer";
const INTERRUPT = "__interrupt__";
const RESUME = "__resume__";

/** The checkpointer of the LangGraph run a tool is called in, if it keeps one. */
export function checkpointsOf(configurable: Record<string, unknown> | undefined): object | undefined {
  const saver = configurable?.[CHECKPOINTER_KEY];
  const ok = !!saver && typeof saver === "object" && typeof (saver as Checkpoints).getTuple === "function" && typeof (saver as Checkpoints).list === "function";
  return ok ? (saver as object) : undefined;
}

/**
 * The decision the resume of the step before this one delivered for `call` (id, tool name and the
 * arguments it runs with), or undefined when nothing there approves exactly this call.
 */
export async function resumedDecision(call: ResumedCall, configurable: Record<string, unknown>): Promise<ResumedDecision | undefined> {
  const saver = checkpointsOf(configurable) as Checkpoints | undefined;
  const threadId = configurable.thread_id;
  // The tool's task namespace is its graph's plus one `node:task` segment.
  const ns = String(configurable.checkpoint_ns ?? "").split("|").slice(0, -1).join("|");
  const current = (configurable.checkpoint_map as Record<string, unknown> | undefined)?.[ns] ?? configurable.checkpoint_id;
  if (!saver || typeof threadId !== "string" || typeof current !== "string") return undefined;
  const step = await stepBefore(saver, { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: current } });
  return step ? decisionIn(step, call) : undefined;
}

/** The checkpoint the current step came from: its parent, or (not saved yet) the latest before it. */
async function stepBefore(saver: Checkpoints, here: SaverConfig): Promise<CheckpointTuple | undefined> {
  const saved = await saver.getTuple(here);
  if (saved) return saved.parentConfig ? saver.getTuple(saved.parentConfig) : undefined;
  const { thread_id, checkpoint_ns } = here.configurable!;
  for await (const t of saver.list({ configurable: { thread_id, checkpoint_ns } }, { before: here, limit: 1 })) return t;
  return undefined;
}

/** The decision for `call` among the HITL interrupts raised in `step` and the resumes that answered them. */
function decisionIn(step: CheckpointTuple, call: ResumedCall): ResumedDecision | undefined {
  const writes = step.pendingWrites ?? [];
  const asked = lastToolCalls(step.checkpoint.channel_values?.messages);
  for (const [task, channel, raised] of writes) {
    if (channel !== INTERRUPT || !Array.isArray(raised)) continue;
    const resumes = writes.find(([t, c]) => t === task && c === RESUME)?.[2];
    for (const [i, interrupt] of raised.entries()) {
      const request = hitlRequest((interrupt as { value?: unknown } | null)?.value);
      const calls = request && matchActions(request.actions, asked);
      const at = calls?.findIndex((c) => c.id === call.id) ?? -1;
      if (!request || at < 0) continue;
      const resume = Array.isArray(resumes) ? (resumes[i] as { decisions?: unknown } | undefined) : undefined;
      const decisions = resume && typeof resume === "object" && Array.isArray(resume.decisions) ? resume.decisions : [];
      return judge({ asked: calls![at]!, call, decision: decisions[at], allowed: request.allowed.get(call.name) });
    }
  }
  return undefined;
}

interface Judged {
  /** The call as the model made it and the person was shown it. */
  asked: ToolCallLike;
  /** The call as the tool is asked to run it. */
  call: ResumedCall;
  decision: unknown;
  allowed: readonly string[] | undefined;
}

/** What one HITL decision means for the call the tool runs: only what was approved, as approved. */
function judge({ asked, call, decision, allowed }: Judged): ResumedDecision | undefined {
  const d = decision && typeof decision === "object" ? (decision as Record<string, unknown>) : undefined;
  if (!d || typeof d.type !== "string" || (allowed && !allowed.includes(d.type))) return { type: "undecided" };
  if (d.type === "reject") return { type: "reject", ...(typeof d.message === "string" && d.message ? { reason: d.message } : {}) };
  if (asked.name !== call.name) return undefined;
  if (d.type === "approve") return canonicalJson(asked.args) === canonicalJson(call.args) ? { type: "approve", edited: [] } : undefined;
  if (d.type !== "edit") return { type: "undecided" };
  const action = (d.editedAction ?? d.edited_action) as { name?: unknown; args?: unknown } | undefined;
  // An edit may change the arguments, never the tool.
  if (!action || action.name !== call.name || canonicalJson(action.args) !== canonicalJson(call.args)) return undefined;
  const edited = Object.keys(call.args).filter((k) => canonicalJson(call.args[k]) !== canonicalJson(asked.args[k]));
  return { type: "approve", edited };
}

interface ToolCallLike {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

/** The tool calls of the last message that made any. */
function lastToolCalls(messages: unknown): ToolCallLike[] {
  if (!Array.isArray(messages)) return [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = (messages[i] as { tool_calls?: unknown } | null)?.tool_calls;
    if (Array.isArray(calls) && calls.length) return calls as ToolCallLike[];
  }
  return [];
}

interface HitlRequest {
  actions: Array<{ name: string; args: unknown }>;
  /** Decision types allowed, by tool name. */
  allowed: ReadonlyMap<string, readonly string[]>;
}

/** The middleware's request, in either casing, if an interrupt's value is one. */
function hitlRequest(value: unknown): HitlRequest | undefined {
  const v = value && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  const actions = v?.actionRequests ?? v?.action_requests;
  if (!Array.isArray(actions)) return undefined;
  const reviews = v!.reviewConfigs ?? v!.review_configs;
  const allowed = new Map<string, readonly string[]>();
  for (const r of Array.isArray(reviews) ? (reviews as Array<Record<string, unknown>>) : []) {
    const name = r?.actionName ?? r?.action_name;
    const types = r?.allowedDecisions ?? r?.allowed_decisions;
    if (typeof name === "string" && Array.isArray(types)) allowed.set(name, types.filter((t): t is string => typeof t === "string"));
  }
  return { actions: actions.map((a) => ({ name: String((a as { name?: unknown })?.name ?? ""), args: (a as { args?: unknown })?.args ?? {} })), allowed };
}

/**
 * The calls the requests stand for (they carry no ids): in order, each the next call with the same
 * name and equal arguments. Undefined when a request matches no call.
 */
function matchActions(actions: HitlRequest["actions"], calls: readonly ToolCallLike[]): ToolCallLike[] | undefined {
  const out: ToolCallLike[] = [];
  let from = 0;
  for (const action of actions) {
    const want = canonicalJson(action.args);
    const found = calls.findIndex((c, i) => i >= from && c.name === action.name && canonicalJson(c.args) === want);
    if (found < 0) return undefined;
    out.push(calls[found]!);
    from = found + 1;
  }
  return out;
}
