import type { LangGraphMessage, LoggedEvent } from "../../../protocol/index.js";
import type { GraphFrame } from "../../../runs/index.js";
import { debugChunk } from "./debug-checkpoint.js";
import { interruptsOf } from "./hitl-value.js";

/** Stream modes a client may ask for; those this server has nothing for are accepted and send nothing. */
export const STREAM_MODES = ["values", "updates", "messages", "messages-tuple", "custom", "debug", "events", "tasks", "checkpoints", "tools"] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** One SSE frame of LangGraph's API. */
export interface Frame {
  /**
   * `<seq>:<n>`: the n-th frame made from the run's event `seq` (-1: the state the run started
   * from); `<seq>:f<n>`: the n-th chunk of the graph's own stream after that event.
   */
  id?: string;
  event: string;
  data: unknown;
}

/** The thread's state as `values` shows it. */
export type Values = { messages: LangGraphMessage[] } & Record<string, unknown>;

export interface FrameOptions {
  runId: string;
  threadId: string;
  graphId: string;
  assistantId: string;
  modes: ReadonlySet<StreamMode>;
  /** The thread's state now (read from the checkpoint, masked). */
  readValues: () => Promise<Values>;
}

/**
 * Where a rejoining client left off: frames up to and including `n` of event `seq` were seen.
 * The graph's chunks after an event come after all frames made from it: their `n` counts from
 * `GRAPH_CHUNKS`.
 */
export interface StreamPosition {
  seq: number;
  n: number;
}

const GRAPH_CHUNKS = 1_000_000;

/** `Last-Event-ID` as `Frame.id` spells it; anything else replays the run from its start. */
export function parsePosition(id: string | undefined): StreamPosition | undefined {
  const m = /^(-1|\d{1,9}):(f?)(\d{1,6})$/.exec(id ?? "");
  return m ? { seq: Number(m[1]), n: (m[2] ? GRAPH_CHUNKS : 0) + Number(m[3]) } : undefined;
}

/** Whether a client at `at` has seen the frame with this id. */
export function seenAt(at: StreamPosition | undefined, id: string | undefined): boolean {
  const p = at && parsePosition(id);
  return p !== undefined && (p.seq < at!.seq || (p.seq === at!.seq && p.n <= at!.n));
}

/**
 * Turns one run's logged events into LangGraph's stream modes, one event at a time, in order. The
 * same events give the same frames, so a client that rejoins after `<seq>:<n>` gets neither a gap
 * nor a repeat. Tokens become `messages` (messages-tuple) or `messages/partial` (messages) of one
 * assistant message per model turn; the terminal event brings the state (`values`) and, at an
 * interrupt, `__interrupt__` in `values` and `updates`.
 */
export class FrameTranslator {
  private turn = 0;
  /** Text and tool calls of the current turn's assistant message, for `messages/partial`. */
  private text = "";
  private calls: Array<{ id: string; name: string; args: Record<string, unknown>; type: "tool_call" }> = [];
  private inTurn = false;

  constructor(private readonly o: FrameOptions) {}

  /** Frames before the first event: the state the run starts from. */
  async start(): Promise<Frame[]> {
    if (!this.o.modes.has("values")) return [];
    return [{ id: "-1:0", event: "values", data: await this.o.readValues() }];
  }

  async frames(e: LoggedEvent | GraphFrame): Promise<Frame[]> {
    if ("kind" in e) return this.graphChunk(e);
    const out = await this.framesOf(e);
    return out.map((f, n) => ({ ...f, id: `${e.seq}:${n}` }));
  }

  /** A chunk of the graph's own stream, under its mode (and, from a subgraph, its namespace) as langgraph-api names it. */
  private graphChunk(f: GraphFrame): Frame[] {
    if (!this.o.modes.has(f.mode)) return [];
    const event = f.namespace.length ? `${f.mode}|${f.namespace.join("|")}` : f.mode;
    const data = JSON.parse(f.data) as unknown;
    return [{ id: `${f.after}:f${f.n}`, event, data: f.mode === "debug" ? debugChunk(data) : data }];
  }

  private async framesOf(e: LoggedEvent): Promise<Frame[]> {
    const d = JSON.parse(e.data) as Record<string, unknown>;
    switch (e.type) {
      case "token":
        return this.aiChunk({ content: String(d.text ?? "") });
      case "tool_call": {
        const call = { id: String(d.call_id), name: String(d.name), args: (d.args ?? {}) as Record<string, unknown>, type: "tool_call" as const };
        return this.aiChunk({ content: "", call });
      }
      case "tool_result":
        return [...this.endTurn(), ...this.toolMessage(d)];
      case "interrupt": {
        const interrupts = interruptsOf(d as never);
        // As LangGraph sends it: the state, then the interrupts as chunks of their own.
        const chunk = { __interrupt__: interrupts };
        return [
          ...this.endTurn(),
          ...(await this.state()),
          ...(this.o.modes.has("updates") ? [{ event: "updates", data: chunk }] : []),
          ...(this.o.modes.has("values") ? [{ event: "values", data: chunk }] : []),
        ];
      }
      case "done":
      case "cancelled":
        return [...this.endTurn(), ...(await this.state())];
      case "error":
        return [...this.endTurn(), { event: "error", data: { error: String(d.code ?? "internal_error"), message: String(d.message ?? "") } }];
      default:
        return [];
    }
  }

  private messageId(): string {
    return `run-${this.o.runId}-${this.turn}`;
  }

  private metadata(node: string) {
    const { runId, threadId, graphId, assistantId } = this.o;
    return { run_id: runId, thread_id: threadId, graph_id: graphId, assistant_id: assistantId, langgraph_node: node };
  }

  private aiChunk(part: { content: string; call?: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" } }): Frame[] {
    const out: Frame[] = [];
    const id = this.messageId();
    const first = !this.inTurn;
    this.inTurn = true;
    this.text += part.content;
    if (part.call) this.calls.push(part.call);
    if (this.o.modes.has("messages-tuple")) {
      const chunk = {
        type: "ai",
        id,
        content: part.content,
        tool_calls: part.call ? [part.call] : [],
        tool_call_chunks: part.call ? [{ id: part.call.id, name: part.call.name, args: JSON.stringify(part.call.args), index: this.calls.length - 1, type: "tool_call_chunk" }] : [],
        invalid_tool_calls: [],
        additional_kwargs: {},
        response_metadata: {},
      };
      out.push({ event: "messages", data: [chunk, this.metadata("agent")] });
    }
    if (this.o.modes.has("messages")) {
      if (first) out.push({ event: "messages/metadata", data: { [id]: { metadata: this.metadata("agent") } } });
      out.push({ event: "messages/partial", data: [this.aiMessage()] });
    }
    return out;
  }

  private aiMessage(): LangGraphMessage {
    return { type: "ai", id: this.messageId(), content: this.text, tool_calls: this.calls, invalid_tool_calls: [], additional_kwargs: {}, response_metadata: {} };
  }

  /** The model's turn is over (a tool ran, or the run ended): the next tokens are a new message. */
  private endTurn(): Frame[] {
    if (!this.inTurn) return [];
    const out: Frame[] = this.o.modes.has("messages") ? [{ event: "messages/complete", data: [this.aiMessage()] }] : [];
    this.turn++;
    this.text = "";
    this.calls = [];
    this.inTurn = false;
    return out;
  }

  private toolMessage(d: Record<string, unknown>): Frame[] {
    const message = {
      type: "tool",
      id: `run-${this.o.runId}-tool-${String(d.call_id)}`,
      content: String(d.output ?? d.error ?? ""),
      tool_call_id: String(d.call_id),
      name: String(d.name),
      status: d.status === "ok" ? "success" : "error",
      additional_kwargs: {},
      response_metadata: {},
    };
    const out: Frame[] = [];
    if (this.o.modes.has("messages-tuple")) out.push({ event: "messages", data: [message, this.metadata("tools")] });
    if (this.o.modes.has("messages")) {
      out.push({ event: "messages/metadata", data: { [message.id]: { metadata: this.metadata("tools") } } });
      out.push({ event: "messages/complete", data: [message] });
    }
    return out;
  }

  private async state(): Promise<Frame[]> {
    if (!this.o.modes.has("values")) return [];
    return [{ event: "values", data: await this.o.readValues() }];
  }
}
