import type { ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { GraphValueError, interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ExecutionLedger } from "../../ledger/index.js";
import {
  applyEdit,
  closingOutcomes,
  type GateDecision,
  hashArgs,
  outcomeMessage,
  TOOL_GATE_KEY,
  type ToolGate,
  type ToolOutcome,
  type ToolRegistry,
} from "../../tools/index.js";
// Not re-exported by the tools folder: only the kit chooses between a run's gate and its own.
import { runGateOf } from "../../tools/tool-gate.js";
import { DEFAULT_REASON, NO_DECISION } from "../../gate/index.js";
import type { MessagesState } from "../graph-state.js";
import type { KitNode } from "./kit-node.js";
import { RunGate } from "../run-gate.js";
import { unansweredCalls } from "../tool-messages.js";
import { resumeDecisions } from "./resume-decisions.js";

/**
 * The value of the gate's interrupt: the pending calls, sensitive arguments masked (and, like the
 * Hono server's interrupt event, no hash of the full arguments, which could confirm a guessed
 * secret), and the JSON that approves them all when given as the resume value.
 */
export interface ApprovalRequest {
  kind: "approval";
  calls: Array<{ call_id: string; name: string; args: Record<string, unknown> }>;
  /** `{"decisions": [{"call_id": …, "approved": true}, …]}`, for `Command({ resume })` or Studio's resume box. */
  resume_with: string;
}

/** Whether an interrupt's value is the gate asking for approval (rather than a graph's own question). */
export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  return !!value && typeof value === "object" && (value as ApprovalRequest).kind === "approval" && Array.isArray((value as ApprovalRequest).calls);
}

/**
 * The gate's node. Under the run engine, the run's gate holds the decisions: a batch it was not
 * asked about pauses here with LangGraph's `interrupt()` (so the node works inside subgraphs and
 * whoever compiles the graph). Elsewhere (`langgraph dev`, a plain `graph.invoke`), decisions
 * come from `configurable.decisions` or the `Command({ resume })` value (tollgate's form, or the
 * HITL middleware's by position), read by the gate's parsers. Each
 * approved call is invoked as a tool call; the tool itself checks the approval and claims the
 * ledger, so a call runs at most once and only as approved.
 */
export function createCallToolNode(registry: ToolRegistry, ledger: ExecutionLedger): KitNode {
  return async function call_tool(state: MessagesState, config: LangGraphRunnableConfig): Promise<{ messages: ToolMessage[] }> {
    const pending = unansweredCalls(state.messages);
    // Nothing above has an effect, and nothing with one may move above: on a resume LangGraph runs
    // this node again from its first line, and `interrupt()` returns the resume value that time.
    const gate = runGateOf(config) ?? localGate(pending, config, ledger);
    if (pending.length && !pending.some((c) => gate.covers(c.id!))) askPerson(pending);
    const messages: ToolMessage[] = [];
    // One by one, in the model's order: a person may approve some and reject others.
    for (const call of pending) {
      // A cancel between two approved calls stops the next one from starting at all.
      config.signal?.throwIfAborted();
      const d = gate.decision(call.id!);
      const refusal = refusalFor(call, d);
      if (refusal) {
        messages.push(outcomeMessage(call, refusal));
        continue;
      }
      const edit = applyEdit(registry, call, d!.edited_args);
      // An edit the gate cannot apply is not a licence to run the original: fail closed.
      if ("error" in edit) {
        messages.push(outcomeMessage(call, closingOutcomes.editRefused(edit.error)));
        continue;
      }
      const tool = registry.get(call.name)!;
      const result: unknown = await tool.invoke(
        { id: call.id!, name: call.name, args: edit.args, type: "tool_call" },
        { ...config, configurable: { ...config.configurable, [TOOL_GATE_KEY]: gate } },
      );
      messages.push(result as ToolMessage);
    }
    return { messages };
  };

  /**
   * Pauses the run at a dynamic interrupt listing the pending calls, or returns the value it was
   * resumed with. A plain continue (no resume value) pauses here again; nothing runs.
   */
  function askPerson(pending: ToolCall[]): unknown {
    const request: ApprovalRequest = {
      kind: "approval",
      calls: pending.map((c) => ({ call_id: c.id!, name: c.name, args: registry.mask(c.name, c.args) })),
      resume_with: JSON.stringify({ decisions: pending.map((c) => ({ call_id: c.id!, approved: true })) }),
    };
    try {
      return interrupt(request);
    } catch (err) {
      // A graph without a checkpointer cannot pause and be resumed: no decision, fail closed.
      if (err instanceof GraphValueError && err.lc_error_code === "MISSING_CHECKPOINTER") return undefined;
      throw err; // the GraphInterrupt that pauses the run, among others
    }
  }

  /**
   * The gate when no engine runs the graph: the decisions of `configurable.decisions` or of the
   * resume value, bound to the pending calls as the engine binds them (tool name, argument hash
   * after the edit). Claims go to `ledger`.
   */
  function localGate(pending: ToolCall[], config: LangGraphRunnableConfig, ledger: ExecutionLedger): ToolGate {
    // An empty config field (Studio's form) is no decisions at all, not an empty list of them.
    const raw: unknown = config.configurable?.decisions;
    const given = raw === null || raw === "" ? undefined : raw;
    const read = resumeDecisions(given === undefined && pending.length ? askPerson(pending) : given, pending, registry);
    const decisions: GateDecision[] = [];
    for (const call of pending) {
      const d = read.get(call.id!);
      if (!d) continue;
      const edit = d.approved && !refusalFor(call, d) ? applyEdit(registry, call, d.edited_args) : undefined;
      const bound = edit && !("error" in edit) ? { run_args_hash: hashArgs(edit.args), edited: edit.changed } : {};
      decisions.push({ ...d, name: call.name, ...bound });
    }
    const threadId = (config.configurable?.thread_id as string | undefined) ?? "local";
    return new RunGate({ threadId, ledger, decisions, resumes: pending.map((c) => c.id!) });
  }
}

/** Why a pending call does not run, before its tool is even called. */
function refusalFor(call: ToolCall, d: GateDecision | undefined): ToolOutcome | undefined {
  if (!d) return closingOutcomes.rejected(NO_DECISION);
  if (!d.approved) return closingOutcomes.rejected(d.reason ?? DEFAULT_REASON);
  if (d.args_hash !== undefined && d.args_hash !== hashArgs(call.args)) {
    return closingOutcomes.argsDiffer();
  }
  return undefined;
}
