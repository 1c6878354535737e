import { AIMessage, AIMessageChunk, ToolMessage } from "@langchain/core/messages";
import { Overwrite } from "@langchain/langgraph";
import type { ToolCall } from "@langchain/core/messages/tool";
import { outcomeOf, type TokenChunk, unparsableError } from "../../graph/index.js";
import type { EventBody, EventOf } from "../../protocol/index.js";
import { type ToolRegistry, validateArgs } from "../../tools/index.js";

type Omit1<T> = Omit<T, "run_id">;

/**
 * One chunk of `graph.stream(…, { streamMode: [...] })`; with `subgraphs: true`, the namespace
 * of the subgraph it came from (`["desk:<task id>", …]`; empty or absent: the graph itself).
 */
export type GraphChunk = [mode: string, chunk: unknown, namespace?: readonly string[]];

/**
 * Turns graph stream output into protocol events: `custom` token chunks → `token`; an `agent`
 * update → one `tool_call` per call; a tool node's update → one `tool_result` per ToolMessage.
 * Terminal events are the run's business, not the adapter's: it needs the final state for them.
 *
 * Custom chunks reach it one of two ways, both through `customEvent`: as `custom` stream chunks
 * here, or through the graph's stream writer built by `customWriter` (what the run engine uses).
 */
export async function* adaptGraphStream(
  chunks: AsyncIterable<GraphChunk>,
  registry: ToolRegistry,
): AsyncGenerator<EventBody> {
  // A subgraph's messages show in its own nodes' updates and again in its parent's (all of them,
  // the earlier runs' included): each call is announced by the node that made it, once.
  const called = new Set<string>();
  const answered = new Set<string>();
  const streamed = new Set<string>();
  const subgraphNodes = new Set<string>();
  for await (const [mode, chunk, ns = []] of chunks) {
    if (mode === "custom") {
      const event = customEvent(chunk);
      if (event) yield event;
      continue;
    }
    if (mode === "messages") {
      const event = messageToken(chunk, streamed);
      if (event) yield event;
      continue;
    }
    if (mode !== "updates" || !chunk || typeof chunk !== "object") continue;
    // A subgraph's own updates come before its parent node's: they name it a subgraph.
    for (let i = 0; i < ns.length; i++) subgraphNodes.add(nodeKey(ns.slice(0, i), ns[i]!.split(":")[0]!));
    for (const [node, update] of Object.entries(chunk)) {
      if (node.startsWith("__") || !update || typeof update !== "object" || subgraphNodes.has(nodeKey(ns, node))) continue;
      for (const m of newMessages((update as { messages?: unknown }).messages)) {
        if (AIMessage.isInstance(m)) {
          for (const call of m.tool_calls ?? []) {
            if (call.id && called.has(call.id)) continue;
            if (call.id) called.add(call.id);
            yield await toolCallEvent(call, m, registry);
          }
        } else if (ToolMessage.isInstance(m) && !answered.has(m.tool_call_id)) {
          answered.add(m.tool_call_id);
          yield toolResultEvent(m);
        }
      }
    }
  }
}

/**
 * A `token` for one item of LangGraph's messages stream: assistant text as a chat model streams
 * it, from any node or subgraph. A whole message comes after the chunks of the node that streamed
 * it (the node's output; its id may differ): skipped when that node's task streamed already.
 * Tool messages are not text (their `tool_result` comes from the updates).
 */
function messageToken(chunk: unknown, streamed: Set<string>): EventBody | undefined {
  const [m, meta] = Array.isArray(chunk) ? chunk : [];
  const task = taskOf(meta);
  if (AIMessageChunk.isInstance(m)) {
    streamed.add(task);
  } else if (!AIMessage.isInstance(m) || streamed.has(task)) {
    return undefined;
  }
  const text = typeof m.content === "string" ? m.content : m.text;
  return text ? { type: "token", text } : undefined;
}

/** A node's place in the graph tree: the namespace it runs in, and its name. */
const nodeKey = (ns: readonly string[], node: string) => `${ns.join("|")}/${node}`;

/** Which task a messages-stream item came from (its checkpoint namespace names node and task). */
function taskOf(meta: unknown): string {
  const m = (meta ?? {}) as { langgraph_checkpoint_ns?: unknown; checkpoint_ns?: unknown };
  return String(m.langgraph_checkpoint_ns ?? m.checkpoint_ns ?? "");
}

/**
 * The graph's stream writer (`config.writer`) for a run: each chunk a node writes becomes its
 * event at once, handed to `emit`, with the same conversion as the `custom` branch above; any
 * other chunk goes to `other`. LangGraph keeps a writer given in the config instead of its own,
 * which would queue each chunk on the graph stream and pass it through the stream's generators:
 * `bench/token-path.ts` measures that at 2–4 µs more CPU per token than this writer.
 */
export function customWriter(emit: (event: EventBody) => void, other?: (chunk: unknown) => void): (chunk: unknown) => void {
  return (chunk) => {
    const event = customEvent(chunk);
    if (event) emit(event);
    else other?.(chunk);
  };
}

/** The event for one chunk a node wrote: a `TokenChunk` with text is a `token`; nothing else is. */
function customEvent(chunk: unknown): EventBody | undefined {
  const text = (chunk as Partial<TokenChunk> | null)?.token;
  return typeof text === "string" && text ? { type: "token", text } : undefined;
}

/**
 * The messages an update adds. An update that overwrites the whole history is the agent node
 * storing a repaired thread (`replaceHistory`) with its answer last: only that answer is new; the
 * rest was announced, or settled, long ago (a repair's own answers show in GET /threads/:id).
 */
function newMessages(messages: unknown): unknown[] {
  if (Overwrite.isInstance<unknown[]>(messages)) return messages.value.slice(-1);
  return Array.isArray(messages) ? messages : [];
}

async function toolCallEvent(call: ToolCall, ai: AIMessage, registry: ToolRegistry): Promise<Omit1<EventOf<"tool_call">>> {
  const request = { id: call.id!, name: call.name, args: call.args };
  // Only calls that will really wait at the gate say so; bad ones fail at once instead.
  const gated =
    registry.needsApproval(call.name) && !unparsableError(ai, request.id) && (await validateArgs(registry, request)) === null;
  // Real arguments: the run log masks them on their way out (`Redactor`), like every other event.
  return { type: "tool_call", call_id: request.id, name: call.name, args: call.args, needs_approval: gated };
}

/** The `tool_result` for a ToolMessage, wherever it came from (graph node, cancel, expiry). */
export function toolResultEvent(m: ToolMessage): Omit1<EventOf<"tool_result">> {
  const o = outcomeOf(m);
  return {
    type: "tool_result",
    call_id: m.tool_call_id,
    name: m.name ?? "",
    status: o.status,
    ...(o.output !== undefined ? { output: o.output } : {}),
    ...(o.error !== undefined ? { error: o.error } : {}),
    ...(o.edited?.length ? { edited: true } : {}),
  };
}
