import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { StateSnapshot } from "@langchain/langgraph";
import type { ToolRegistry } from "../tools/index.js";
import { CALL_TOOL_NODE, type MessagesState } from "./graph-state.js";
import { isApprovalRequest } from "./kit/call-tool-node.js";
import type { ServedGraph } from "./served-graph.js";
import { unansweredCalls } from "./tool-messages.js";

/** A graph's own `interrupt(value)` that is not the gate: a question for people. */
export interface GraphQuestion {
  question_id: string;
  value: unknown;
}

/** Where a thread's graph stands: its top-level messages, and what it waits for, if anything. */
export interface GateState {
  messages: BaseMessage[];
  /** The calls waiting at the gate, with their real arguments (the model's order). */
  calls: ToolCall[];
  /** Interrupts the graph raised for something other than a tool call. */
  questions: GraphQuestion[];
  /** Whether the graph is paused (at the gate, or at a question). */
  waiting: boolean;
  /** The top-level node it is paused in, if any. */
  pausedIn: string | undefined;
}

/**
 * Reads where the thread's graph stands, at any depth: the built-in agent pauses before
 * `call_tool` (a static interrupt, the calls are the last AI message's); the kit's `call_tool`
 * pauses itself with `interrupt()`, in the graph or in a subgraph, and names its calls (their
 * real arguments are read from the messages of the state that holds them). Every other
 * interrupt is a question.
 */
export async function readGateState(served: ServedGraph, threadId: string): Promise<GateState> {
  const snapshot = await served.graph.getState({ configurable: { thread_id: threadId } }, { subgraphs: true });
  return gateStateOf(snapshot, served.registry);
}

export function gateStateOf(snapshot: StateSnapshot, registry: ToolRegistry): GateState {
  const messages = (snapshot.values as Partial<MessagesState>).messages ?? [];
  const open = snapshot.tasks.filter((t) => t.result === undefined);
  const interrupts = new Map<string, unknown>();
  const known = new Map<string, ToolCall>();
  walk(snapshot, (s) => {
    for (const m of (s.values as Partial<MessagesState>).messages ?? []) {
      if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) known.set(c.id, c);
    }
    for (const t of s.tasks) for (const i of t.interrupts ?? []) if (i.id && !interrupts.has(i.id)) interrupts.set(i.id, i.value);
  });
  const calls: ToolCall[] = [];
  const questions: GraphQuestion[] = [];
  for (const [id, value] of interrupts) {
    if (!isApprovalRequest(value)) {
      questions.push({ question_id: id, value });
      continue;
    }
    for (const c of value.calls) {
      const real = known.get(c.call_id);
      if (real && !calls.some((x) => x.id === real.id)) calls.push(real);
    }
  }
  // The built-in agent's static interrupt: before `call_tool`, with no interrupt value.
  if (interrupts.size === 0 && snapshot.next.includes(CALL_TOOL_NODE)) {
    calls.push(...unansweredCalls(messages).filter((c) => registry.needsApproval(c.name)));
  }
  const waiting = calls.length > 0 || questions.length > 0;
  return { messages, calls, questions, waiting, pausedIn: waiting ? open[0]?.name : undefined };
}

/** Visits a snapshot and the snapshots of its subgraphs (read with `{ subgraphs: true }`). */
function walk(s: StateSnapshot, visit: (s: StateSnapshot) => void): void {
  visit(s);
  for (const t of s.tasks) {
    const sub = t.state as StateSnapshot | undefined;
    if (sub && typeof sub === "object" && "values" in sub) walk(sub, visit);
  }
}
