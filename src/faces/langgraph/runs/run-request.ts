import { z } from "zod";
import { refusals } from "../../../protocol/index.js";
import { FRAME_MODES, type FrameRequest } from "../../../runs/index.js";
import { STREAM_MODES, type StreamMode } from "./stream-frames.js";

const MAX_MESSAGE_CHARS = 32 * 1024;

/** The body of `POST /threads/{id}/runs[/stream|/wait]`, as LangGraph's SDK sends it. Keys this server does not use pass. */
export const runCreateBody = z
  .object({
    assistant_id: z.string().min(1).max(200),
    input: z.unknown().optional(),
    command: z.object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() }).passthrough().nullish(),
    stream_mode: z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))]).optional(),
    stream_subgraphs: z.boolean().optional(),
    stream_resumable: z.boolean().optional(),
    on_disconnect: z.enum(["cancel", "continue"]).optional(),
    multitask_strategy: z.enum(["reject", "rollback", "interrupt", "enqueue"]).optional(),
    interrupt_before: z.unknown().optional(),
    interrupt_after: z.unknown().optional(),
    checkpoint: z.unknown().optional(),
    checkpoint_id: z.unknown().optional(),
  })
  .passthrough();
export type RunCreate = z.infer<typeof runCreateBody>;

/** What a run request asks for, once the refusals have been applied. */
export type RunAsk = { kind: "message"; message: string; clientMessageId?: string } | { kind: "resume"; resume: unknown };

/**
 * The run a request asks for. Refused, because each could open the gate around it: messages that
 * answer tool calls or carry them, a command that writes state or jumps to a node, breakpoints of
 * its own; then what this server does not do (queueing runs).
 */
export function readRunAsk(body: RunCreate): RunAsk {
  const { command } = body;
  if (command?.update != null) throw refusals.stateUpdateRefused();
  if (command?.goto != null) throw refusals.gotoRefused();
  if (nonEmpty(body.interrupt_before) || nonEmpty(body.interrupt_after)) throw refusals.breakpointsRefused();
  const message = body.input == null ? undefined : userMessage(body.input);
  if (body.multitask_strategy !== undefined && body.multitask_strategy !== "reject") throw refusals.onlyRejectStrategy("multitask_strategy");
  // `input` may ride along with a resume (Agent Chat UI sends `{}`): the command wins, as in LangGraph.
  if (command && command.resume !== undefined) return { kind: "resume", resume: command.resume };
  if (message === undefined) throw refusals.runNeedsInput();
  return { kind: "message", message, ...clientIdOf(body.input) };
}

/** A client's own id for its message, when it is a plain token (LangGraph clients send a uuid). */
function clientIdOf(input: unknown): { clientMessageId?: string } {
  const messages = (input as { messages?: unknown }).messages;
  const first = (Array.isArray(messages) ? messages[0] : messages) as { id?: unknown } | undefined;
  return typeof first?.id === "string" && /^[\w.:-]{1,128}$/.test(first.id) ? { clientMessageId: first.id } : {};
}

/**
 * The checkpoint a run asks to start from, if any. LangGraph's `useStream` sends the thread's head
 * with every run: that is where every run starts anyway. Only an older one (a fork) is refused.
 */
export function requestedCheckpoint(body: RunCreate): string | undefined {
  const nested = body.checkpoint && typeof body.checkpoint === "object" ? (body.checkpoint as { checkpoint_id?: unknown }).checkpoint_id : undefined;
  const id = nested ?? body.checkpoint_id;
  if (id == null) return undefined;
  if (typeof id !== "string") throw refusals.checkpointIdNotString();
  return id;
}

const streamModeList = z.array(z.enum(STREAM_MODES));

/** The stream modes asked for (a body's `stream_mode`, a rejoin's query); none means `values`, as in LangGraph. */
export function streamModes(asked: unknown): Set<StreamMode> {
  const list = streamModeList.safeParse(asked === undefined ? [] : Array.isArray(asked) ? asked : [asked]);
  if (!list.success) throw refusals.badStreamMode(STREAM_MODES);
  return new Set(list.data.length ? list.data : ["values"]);
}

/**
 * What of the graph's own stream (node updates, what nodes write, debug) the run keeps for its
 * streams: what the body's modes ask for, as langgraph-api keeps only the modes a run was made with.
 */
export function frameRequest(body: RunCreate): FrameRequest | undefined {
  const asked = streamModes(body.stream_mode);
  const modes = new Set(FRAME_MODES.filter((m) => asked.has(m)));
  return modes.size ? { modes, subgraphs: body.stream_subgraphs === true } : undefined;
}

/** The one user message in `input.messages`; tool and assistant messages are refused. Empty input is none. */
function userMessage(input: unknown): string | undefined {
  if (typeof input !== "object" || Array.isArray(input)) throw refusals.inputNotObject();
  const { messages, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length) throw refusals.inputOnlyMessages(Object.keys(rest));
  if (messages === undefined) return undefined;
  const list = Array.isArray(messages) ? messages : [messages];
  for (const m of list) {
    const role = roleOf(m);
    if (role === "tool" || (role === "ai" && hasToolCalls(m))) throw refusals.inputCarriesTools();
    if (role !== "human") throw refusals.inputOnlyUser();
  }
  if (list.length !== 1) throw refusals.inputOneMessage();
  const text = textOf(list[0]);
  if (!text.trim()) throw refusals.emptyMessage();
  if (text.length > MAX_MESSAGE_CHARS) throw refusals.messageTooLong();
  return text;
}

function roleOf(m: unknown): string {
  if (typeof m === "string") return "human";
  if (!m || typeof m !== "object") return "unknown";
  const x = m as Record<string, unknown>;
  const t = String(x.type ?? x.role ?? "").toLowerCase();
  if (t === "human" || t === "user" || t === "humanmessage" || t === "humanmessagechunk") return "human";
  if (t === "ai" || t === "assistant" || t === "aimessage" || t === "aimessagechunk") return "ai";
  if (t === "tool" || t === "toolmessage" || t === "function") return "tool";
  return t || "unknown";
}

function hasToolCalls(m: unknown): boolean {
  const x = m as Record<string, unknown>;
  const kw = x.additional_kwargs as Record<string, unknown> | undefined;
  return [x.tool_calls, x.tool_call_chunks, x.invalid_tool_calls, kw?.tool_calls].some((v) => Array.isArray(v) && v.length > 0);
}

function textOf(m: unknown): string {
  if (typeof m === "string") return m;
  const content = (m as Record<string, unknown>).content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b: unknown) => {
        const block = b as Record<string, unknown> | null;
        if (typeof b === "string") return b;
        if (block?.type === "text" && typeof block.text === "string") return block.text;
        throw refusals.textOnly();
      })
      .join("");
  }
  throw refusals.messageNeedsContent();
}

function nonEmpty(v: unknown): boolean {
  return v != null && !(Array.isArray(v) && v.length === 0);
}
