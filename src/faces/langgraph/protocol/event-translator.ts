import type { CheckpointSummary } from "../../../graph/index.js";
import type { InterruptPayload, LoggedEvent } from "../../../protocol/index.js";
import type { GraphFrame } from "../../../runs/index.js";
import { closingOutcomes } from "../../../tools/index.js";
import { interruptsOf } from "../runs/hitl-value.js";
import type { Values } from "../runs/stream-frames.js";
import type { Emitted, Slot } from "./protocol-event.js";

export interface TranslatorOptions {
  graphId: string;
  /** The id of the run's `turn`-th assistant message (from 0), as the face shows it in state too. */
  messageId: (turn: number) => string;
  /** The thread's state now (masked), and the checkpoint it was read from (none before the first). */
  readState: () => Promise<{ values: Values; checkpoint: CheckpointSummary | undefined }>;
}

/** `@langchain/protocol`'s checkpoint sources (LangGraph's `metadata.source`). */
const CHECKPOINT_SOURCES = new Set(["input", "loop", "update", "fork"]);

type ToolCall = { id: string; name: string; args: Record<string, unknown> };

/**
 * Turns one run's logged events into the thread-centric protocol's events, in order: tokens and
 * tool calls into one AI message per model turn (message-start, content blocks, message-finish),
 * tool results into `tools` events, the terminal event into state, input requests and the root
 * lifecycle. Each `values` comes right after the `checkpoints` envelope of the checkpoint it was
 * read from, as LangGraph pairs them (a client marks messages with the checkpoint to fork from).
 * The same events give the same output, so a replay from the log matches what was sent live.
 * Everything it reads was masked before it was logged.
 */
export class ProtocolTranslator {
  private turn = 0;
  private inMessage = false;
  /** Index of the open content block, and its text so far (a text block). */
  private block: { index: number; text: string } | undefined;
  private blocks = 0;
  /** The calls this run's model asked for, for `tool-started`'s input. */
  private readonly calls = new Map<string, ToolCall>();

  constructor(private readonly o: TranslatorOptions) {}

  /** What a run's start sends: it runs, from this state. */
  async start(): Promise<Slot[]> {
    return [{ method: "lifecycle", data: { event: "running", graph_name: this.o.graphId } }, ...(await this.values())];
  }

  async events(e: LoggedEvent): Promise<Slot[]> {
    const d = JSON.parse(e.data) as Record<string, unknown>;
    switch (e.type) {
      case "token":
        return this.text(String(d.text ?? ""));
      case "tool_call":
        return this.toolCall({ id: String(d.call_id), name: String(d.name), args: (d.args ?? {}) as Record<string, unknown> });
      case "tool_result":
        return [...this.endMessage(), ...this.toolResult(d)];
      case "interrupt": {
        const requests = interruptsOf(d as unknown as InterruptPayload).map((i) => inputRequested(i));
        return [...this.endMessage(), ...(await this.values()), ...requests, lifecycle("interrupted", this.o.graphId)];
      }
      case "done":
        return [...this.endMessage(), ...(await this.values()), lifecycle("completed", this.o.graphId)];
      case "cancelled":
        // A cancel is a failure to the protocol: never `completed` or `interrupted`.
        return [...this.endMessage(), ...(await this.values()), { ...lifecycle("failed", this.o.graphId), data: { event: "failed", graph_name: this.o.graphId, error: "cancelled" } }];
      case "error":
        return [...this.endMessage(), { method: "lifecycle", data: { event: "failed", graph_name: this.o.graphId, error: String(d.message ?? d.code ?? "error") } }];
      default:
        return [];
    }
  }

  /**
   * A chunk of the graph's own stream, masked when it was recorded: what a node wrote with
   * `config.writer` (as langgraph-api wraps it), a task's start or result; a subgraph's under its
   * namespace.
   */
  frame(f: GraphFrame): Emitted | null {
    const method = frameChannel(f);
    if (!method) return null;
    const data = JSON.parse(f.data) as unknown;
    return { method, namespace: f.namespace, data: method === "custom" ? { payload: data } : data };
  }

  private messageStart(): Emitted[] {
    if (this.inMessage) return [];
    this.inMessage = true;
    this.blocks = 0;
    return [this.message({ event: "message-start", role: "ai", id: this.o.messageId(this.turn) })];
  }

  private text(text: string): Emitted[] {
    const out = this.messageStart();
    if (!this.block) {
      this.block = { index: this.blocks++, text: "" };
      out.push(this.message({ event: "content-block-start", index: this.block.index, content: { type: "text", text: "" } }));
    }
    this.block.text += text;
    out.push(this.message({ event: "content-block-delta", index: this.block.index, delta: { type: "text-delta", text } }));
    return out;
  }

  private toolCall(call: ToolCall): Emitted[] {
    this.calls.set(call.id, call);
    const out = [...this.messageStart(), ...this.finishBlock()];
    const index = this.blocks++;
    out.push(this.message({ event: "content-block-start", index, content: { type: "tool_call_chunk", id: call.id, name: call.name, args: "", index } }));
    out.push(this.message({ event: "content-block-delta", index, delta: { type: "tool-call-delta", args: JSON.stringify(call.args) } }));
    out.push(this.message({ event: "content-block-finish", index, content: { type: "tool_call", id: call.id, name: call.name, args: call.args } }));
    return out;
  }

  private finishBlock(): Emitted[] {
    if (!this.block) return [];
    const { index, text } = this.block;
    this.block = undefined;
    return [this.message({ event: "content-block-finish", index, content: { type: "text", text } })];
  }

  /** The model's turn is over (a tool ran, or the run ended): the next tokens are a new message. */
  private endMessage(): Emitted[] {
    if (!this.inMessage) return [];
    const out = [...this.finishBlock(), this.message({ event: "message-finish", reason: "stop" })];
    this.inMessage = false;
    this.turn++;
    return out;
  }

  /** A call that ran: started, then finished or failed. A call closed without running: only its error. */
  private toolResult(d: Record<string, unknown>): Emitted[] {
    const id = String(d.call_id);
    const name = String(d.name);
    const status = String(d.status);
    const text = String(d.output ?? d.error ?? "");
    const update: Emitted = { method: "updates", node: "tools", data: { messages: [{ type: "tool", tool_call_id: id, name, content: text, status: status === "ok" ? "success" : "error" }] } };
    if (status === "rejected" || status === "expired" || status === "cancelled" || status === "invalid_args") {
      return [toolError({ id, message: text, code: status }), update];
    }
    const input = this.calls.get(id)?.args;
    const started: Emitted = { method: "tools", data: { event: "tool-started", tool_call_id: id, tool_name: name, ...(input ? { input } : {}) } };
    if (status === "ok") return [started, { method: "tools", data: { event: "tool-finished", tool_call_id: id, output: text } }, update];
    return [started, toolError({ id, message: text }), update];
  }

  private message(data: Record<string, unknown>): Emitted {
    return { method: "messages", node: "agent", data };
  }

  /** The state, after its checkpoint's envelope (a slot left empty before the thread's first). */
  private async values(): Promise<Slot[]> {
    const { values, checkpoint: c } = await this.o.readState();
    const source = CHECKPOINT_SOURCES.has(c?.source ?? "") ? c?.source : "loop";
    const envelope: Slot = c ? { method: "checkpoints", data: { id: c.id, ...(c.parentId ? { parent_id: c.parentId } : {}), step: c.step ?? -1, source } } : null;
    return [envelope, { method: "values", data: values }];
  }
}

/** The channel a chunk of the graph's stream travels on, if any carries it. */
export function frameChannel(f: Pick<GraphFrame, "mode">): "custom" | "tasks" | undefined {
  return f.mode === "custom" || f.mode === "tasks" ? f.mode : undefined;
}

/**
 * How many assistant messages a run's events stream (a model call that said or asked for
 * something), counted as the translator counts its turns.
 */
export function turnsIn(events: readonly LoggedEvent[]): number {
  let turns = 0;
  let open = false;
  for (const e of events) {
    if (e.type === "token" || e.type === "tool_call") {
      if (!open) turns++;
      open = true;
    } else if (e.type === "tool_result" || e.type === "interrupt" || e.type === "done" || e.type === "cancelled" || e.type === "error") {
      open = false;
    }
  }
  return turns;
}

/**
 * An interrupt's change after the run that opened it, as the protocol tells it: decisions on single
 * calls ask again with the updated value; a close answers it, and calls closed without running
 * (expired, cancelled) fail with the text the model is told.
 */
export function interruptChange(o: { opened: InterruptPayload; now: InterruptPayload | undefined; status: string }): Emitted[] {
  if (o.status === "waiting_human") return o.now && o.now.interrupt_id === o.opened.interrupt_id ? interruptsOf(o.now).map(inputRequested) : [];
  const ids = interruptsOf(o.opened).map((i) => i.id);
  const out: Emitted[] = [{ method: "input.answered", data: { interrupt_ids: [...new Set([...ids, o.opened.interrupt_id])] } }];
  if (o.status === "expired" || o.status === "cancelled") {
    const message = (o.status === "expired" ? closingOutcomes.expired() : closingOutcomes.cancelled()).error ?? o.status;
    for (const c of o.opened.calls) out.push(toolError({ id: c.call_id, message, code: o.status }));
  }
  return out;
}

function inputRequested(i: { id: string; value: unknown }): Emitted {
  return { method: "input.requested", data: { interrupt_id: i.id, payload: i.value } };
}

function lifecycle(event: string, graphName: string): Emitted {
  return { method: "lifecycle", data: { event, graph_name: graphName } };
}

function toolError(o: { id: string; message: string; code?: string }): Emitted {
  return { method: "tools", data: { event: "tool-error", tool_call_id: o.id, message: o.message, ...(o.code ? { code: o.code } : {}) } };
}
