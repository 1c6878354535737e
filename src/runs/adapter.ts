import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { Overwrite } from "@langchain/langgraph";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { TokenChunk } from "../../graphs/nodes/agent-node.js";
import { outcomeOf, unparsableError } from "../../graphs/tool-messages.js";
import type { EventBody, EventOf } from "../protocol/index.js";
import { type ToolRegistry, validateArgs } from "../tools/index.js";

type Omit1<T> = Omit<T, "run_id">;

/** One chunk of `graph.stream(…, { streamMode: ["updates", "custom"] })`. */
export type GraphChunk = [mode: string, chunk: unknown];

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
  for await (const [mode, chunk] of chunks) {
    if (mode === "custom") {
      const event = customEvent(chunk);
      if (event) yield event;
      continue;
    }
    if (mode !== "updates" || !chunk || typeof chunk !== "object") continue;
    for (const [node, update] of Object.entries(chunk)) {
      if (node.startsWith("__") || !update || typeof update !== "object") continue;
      for (const m of newMessages((update as { messages?: unknown }).messages)) {
        if (AIMessage.isInstance(m)) {
          for (const call of m.tool_calls ?? []) yield await toolCallEvent(call, m, registry);
        } else if (ToolMessage.isInstance(m)) {
          yield toolResultEvent(m);
        }
      }
    }
  }
}

/**
 * The graph's stream writer (`config.writer`) for a run: each chunk a node writes becomes its
 * event at once, handed to `emit`, with the same conversion as the `custom` branch above.
 * LangGraph keeps a writer given in the config instead of its own, which would queue each chunk
 * on the graph stream and pass it through the stream's generators: `bench/token-path.ts`
 * measures that at 2–4 µs more CPU per token than this writer.
 */
export function customWriter(emit: (event: EventBody) => void): (chunk: unknown) => void {
  return (chunk) => {
    const event = customEvent(chunk);
    if (event) emit(event);
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
