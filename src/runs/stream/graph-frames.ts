import { isBaseMessage } from "@langchain/core/messages";
import { Overwrite } from "@langchain/langgraph";
import type { TokenChunk } from "../../graph/index.js";
import { toLangGraphMessage } from "../../protocol/index.js";
import type { Redactor } from "../../ops/index.js";
import { toWire } from "./wire-message.js";

/**
 * The graph's own stream modes a LangGraph API client may ask for, beside what the seven events
 * carry. Its messages are not among them: a client's message chunks are the run's `token` events,
 * which the run's token filter scrubs across tokens (see `RunLog`); a frame is scrubbed alone.
 */
export const FRAME_MODES = ["updates", "custom", "debug", "tasks"] as const;
export type FrameMode = (typeof FRAME_MODES)[number];

/** The modes streamed only for a client that asked: the seven events come from the others. */
export const CLIENT_ONLY_MODES: ReadonlySet<string> = new Set<FrameMode>(["custom", "debug", "tasks"]);

/** What a run records of its graph's own stream, for a client that asked when starting it. */
export interface FrameRequest {
  modes: ReadonlySet<FrameMode>;
  /** Chunks of subgraphs too, each with its namespace. */
  subgraphs: boolean;
}

/** One chunk of the graph's stream, masked and serialized, placed after the run's event `after`. */
export interface GraphFrame {
  kind: "frame";
  mode: FrameMode;
  /** The subgraph it came from (`["node:<task id>", …]`); empty for the graph itself. */
  namespace: readonly string[];
  /** Masked and serialized when first read: a chunk no stream wants costs nothing more. */
  readonly data: string;
  /** The seq of the last event logged before it (-1: none yet). */
  after: number;
  /** Its place among the frames after the same event. */
  n: number;
}

/** How deep a chunk is walked; what lies deeper is left out. */
const MAX_DEPTH = 32;

/**
 * A chunk as it may leave the process: messages in LangGraph's serialized shape, masked like a
 * thread view's (tool arguments and outputs by the tools' sensitive paths), every string scrubbed
 * of secrets. Only plain data is kept: class instances (the run's gate, signals, callbacks in a
 * debug chunk's config) and functions are left out, and so are LangGraph's `__pregel_*` internals.
 */
export function showChunk(chunk: unknown, redactor: Redactor): string {
  return JSON.stringify(redactor.scrubber.scrubDeep(walk(chunk, { redactor, depth: 0, seen: new Set() })) ?? null);
}

/** Where `walk` is: how deep in the chunk, and the objects on the way there (a cycle ends the walk). */
interface Walk {
  redactor: Redactor;
  depth: number;
  seen: Set<object>;
}

function walk(v: unknown, at: Walk): unknown {
  const { redactor, depth, seen } = at;
  if (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  if (typeof v !== "object" || depth > MAX_DEPTH || seen.has(v)) return undefined;
  if (isBaseMessage(v)) {
    // A message is one thing on the wire; a system prompt shows as nothing, as in a thread view.
    const [wire] = toWire(v).map((m) => redactor.message(m));
    return wire ? toLangGraphMessage({ ...wire, id: v.id }) : undefined;
  }
  if (Overwrite.isInstance(v)) return walk(v.value, at);
  seen.add(v);
  try {
    if (Array.isArray(v)) return v.map((x) => walk(x, { ...at, depth: depth + 1 }) ?? null);
    if (v instanceof Date) return v.toISOString();
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return undefined;
    const out: Record<string, unknown> = {};
    // A tool call as a plain object (a Send's payload, a middleware's action request): its
    // arguments masked as the tool says, like a message's.
    const call = v as { name?: unknown; args?: unknown };
    const masked = typeof call.name === "string" && call.args && typeof call.args === "object" ? { ...v, args: redactor.callArgs(call.name, call.args as Record<string, unknown>) } : v;
    for (const [k, x] of Object.entries(masked)) {
      // LangGraph's internals, and interrupt values: what waits is shown by the gate's own frames.
      if (k.startsWith("__pregel_") || k === "__interrupt__" || k === "interrupts") continue;
      const shown = walk(x, { ...at, depth: depth + 1 });
      if (shown !== undefined) out[k] = shown;
    }
    return out;
  } finally {
    seen.delete(v);
  }
}

/** A chunk of the graph's stream, as the run engine sees it: its mode, its data, its subgraph. */
export type FrameTap = (mode: string, chunk: unknown, namespace: readonly string[]) => void;

/** A chunk to record: where it comes from, and how it is shown (masked, serialized) once read. */
export interface TappedChunk {
  mode: FrameMode;
  namespace: readonly string[];
  show: () => string;
}

/**
 * What records the chunks a client asked for: `updates` without LangGraph's `__interrupt__` (the
 * stream shows the gate's own), what nodes wrote (`custom`) but the built-in agent's tokens,
 * `debug`, `tasks`; a subgraph's only when asked. Each is masked (see `showChunk`) when a stream
 * first reads it, off the graph's own loop.
 */
export function frameTap(request: FrameRequest, redactor: Redactor, emit: (f: TappedChunk) => void): FrameTap {
  return (mode, chunk, namespace) => {
    if (!isFrameMode(mode) || !request.modes.has(mode) || (namespace.length > 0 && !request.subgraphs)) return;
    let data = chunk;
    if (mode === "updates") {
      if (!chunk || typeof chunk !== "object") return;
      const nodes = Object.entries(chunk).filter(([node]) => !node.startsWith("__"));
      if (!nodes.length) return;
      data = Object.fromEntries(nodes);
    }
    if (mode === "custom" && isTokenChunk(chunk)) return;
    emit({ mode, namespace, show: () => showChunk(data, redactor) });
  };
}

function isFrameMode(mode: string): mode is FrameMode {
  return (FRAME_MODES as readonly string[]).includes(mode);
}

/** The built-in agent's own tokens (see `TokenChunk`): they are `token` events, not frames. */
function isTokenChunk(chunk: unknown): boolean {
  return typeof (chunk as Partial<TokenChunk> | null)?.token === "string";
}
