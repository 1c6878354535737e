import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { StateSnapshot } from "@langchain/langgraph";
import type { ToolRegistry } from "../tools/index.js";
import { CALL_TOOL_NODE } from "./graph-state.js";
import { isApprovalRequest } from "./kit/call-tool-node.js";
import { allowedDecisions, matchActions, readHitlRequest } from "./hitl.js";
import { messagesOf, subgraphState } from "./paused-messages.js";
import type { ServedGraph } from "./served-graph.js";
import { unansweredCalls } from "./tool-messages.js";

/** A graph's own `interrupt(value)` that is not the gate: a question for people. */
export interface GraphQuestion {
  question_id: string;
  value: unknown;
}

/** One interrupt of LangChain's HITL middleware: its calls in its order, with the decisions it allows each. */
export interface HitlInterrupt {
  interrupt_id: string;
  calls: Array<{ call_id: string; allowed: readonly string[] }>;
}

/** Where a thread's graph stands: its top-level messages, and what it waits for, if anything. */
export interface GateState {
  messages: BaseMessage[];
  /** The calls waiting at the gate, with their real arguments (the model's order). */
  calls: ToolCall[];
  /** Interrupts the graph raised for something other than a tool call. */
  questions: GraphQuestion[];
  /** LangChain's HITL middleware interrupts: which calls each stands for, in its order. */
  hitl: HitlInterrupt[];
  /** HITL interrupts whose requests match no open call (the graph is not servable as it stands). */
  unmatched: string[];
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
  const messages = messagesOf(snapshot);
  const open = snapshot.tasks.filter((t) => t.result === undefined);
  // Each interrupt with the state that raised it: a parent lists its subgraphs' interrupts too,
  // and the deepest one (visited last) holds the messages they are about.
  const interrupts = new Map<string, { value: unknown; at: StateSnapshot }>();
  const known = new Map<string, ToolCall>();
  walk(snapshot, (s) => {
    for (const m of messagesOf(s)) {
      if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) known.set(c.id, c);
    }
    for (const t of s.tasks) for (const i of t.interrupts ?? []) if (i.id) interrupts.set(i.id, { value: i.value, at: s });
  });
  const calls: ToolCall[] = [];
  const questions: GraphQuestion[] = [];
  const hitl: HitlInterrupt[] = [];
  const unmatched: string[] = [];
  const add = (c: ToolCall) => {
    if (!calls.some((x) => x.id === c.id)) calls.push(c);
  };
  for (const [id, { value, at }] of interrupts) {
    if (isApprovalRequest(value)) {
      for (const c of value.calls) {
        const real = known.get(c.call_id);
        if (real) add(real);
      }
      continue;
    }
    const request = readHitlRequest(value);
    if (!request) {
      questions.push({ question_id: id, value });
      continue;
    }
    // LangChain's middleware names no call ids: its requests are the AI message's calls, in order.
    const matched = matchActions(request, unansweredCalls(messagesOf(at)));
    if (!matched) {
      unmatched.push(id);
      continue;
    }
    matched.forEach(add);
    hitl.push({ interrupt_id: id, calls: matched.map((c) => ({ call_id: c.id!, allowed: allowedDecisions(request, c.name) })) });
  }
  // The built-in agent's static interrupt: before `call_tool`, with no interrupt value.
  if (interrupts.size === 0 && snapshot.next.includes(CALL_TOOL_NODE)) {
    calls.push(...unansweredCalls(messages).filter((c) => registry.needsApproval(c.name)));
  }
  const waiting = calls.length > 0 || questions.length > 0 || unmatched.length > 0;
  return { messages, calls, questions, hitl, unmatched, waiting, pausedIn: waiting ? open[0]?.name : undefined };
}

/** Visits a snapshot and the snapshots of its subgraphs (read with `{ subgraphs: true }`). */
function walk(s: StateSnapshot, visit: (s: StateSnapshot) => void): void {
  visit(s);
  for (const t of s.tasks) {
    const sub = subgraphState(t);
    if (sub) walk(sub, visit);
  }
}
