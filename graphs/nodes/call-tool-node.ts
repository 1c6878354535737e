import type { ToolCall } from "@langchain/core/messages/tool";
import { GraphValueError, interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { applyEdit, hashArgs, runToolCall, type ToolOutcome, type ToolRegistry, untilAborted } from "../../src/tools/index.js";
import { readDecisions, type GateDecision } from "../decisions.js";
import type { ExecutionLedger } from "../../src/ledger/index.js";
import type { AgentStateType, AgentUpdate } from "../state.js";
import { closingOutcomes, outcomeMessage, unansweredCalls } from "../tool-messages.js";

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

/**
 * The gate. Runs after the static interrupt (`interruptBefore: ["call_tool"]`). Decisions come
 * from `configurable.decisions` when the run config has them (the Hono server always sends them);
 * otherwise the node pauses at LangGraph's `interrupt()` and reads the `Command({ resume })` value
 * with the same parser. Only a call approved by id (and, when a hash is given, with unchanged
 * arguments) runs, and at most once: the ledger is claimed durably before the tool is called.
 */
export function createCallToolNode(registry: ToolRegistry, ledger: ExecutionLedger) {
  return async function call_tool(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentUpdate> {
    const pending = unansweredCalls(state.messages);
    // An empty config field (Studio's form) is no decisions at all, not an empty list of them.
    const raw: unknown = config.configurable?.decisions;
    const given = raw === null || raw === "" ? undefined : raw;
    // Nothing above has an effect, and nothing with one may move above: on a resume LangGraph runs
    // this node again from its first line, and `interrupt()` returns the resume value that time.
    const decisions = readDecisions(given === undefined && pending.length ? askPerson(pending) : given);
    const threadId = (config.configurable?.thread_id as string | undefined) ?? "local";
    // Set by the server: the ledger then claims only for the run that holds the thread.
    const runId = config.configurable?.run_id as string | undefined;
    const messages = [];
    // One by one, in the model's order: a person may approve some and reject others.
    for (const call of pending) {
      // A cancel between two approved calls stops the next one from starting at all.
      config.signal?.throwIfAborted();
      const outcome = await decide(call, decisions.get(call.id!), threadId, runId, config.signal);
      messages.push(outcomeMessage(call, outcome));
    }
    return { messages, rounds: 0 };
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

  async function decide(
    call: ToolCall,
    d: GateDecision | undefined,
    threadId: string,
    runId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ToolOutcome> {
    if (!d) return closingOutcomes.rejected("no decision");
    if (!d.approved) return closingOutcomes.rejected(d.reason ?? "User denied");
    if (d.args_hash !== undefined && d.args_hash !== hashArgs(call.args)) {
      return { status: "error", error: "arguments differ from the approved call; not executed" };
    }
    // An edit the gate cannot apply is not a licence to run the original: fail closed.
    const edit = applyEdit(registry, call, d.edited_args);
    if ("error" in edit) return { status: "error", error: `${edit.error}; not executed` };
    const edited = edit.changed.length ? { edited: edit.changed } : {};
    const key = `${threadId}:${call.id}`;
    // The ledger binds what actually runs: the edited arguments when there was an edit.
    const claim = await ledger.claim(key, { threadId, callId: call.id!, name: call.name, argsHash: hashArgs(edit.args), runId });
    if (claim.kind === "settled") return claim.outcome;
    if (claim.kind === "in_doubt") return closingOutcomes.outcomeUnknown();
    // The ledger is settled when the tool's code really ends, even after this run stopped waiting:
    // a tool that ignores the abort and commits later is recorded with what it did.
    const settled = runToolCall(registry, { id: call.id!, name: call.name, args: edit.args }, { signal, threadId }).then(
      async (result) => {
        const outcome = { ...result, ...edited };
        await ledger.settle(key, outcome);
        return outcome;
      },
      async (err: unknown) => {
        // runToolCall only throws for an abort that the tool itself gave in to, before committing.
        await ledger.settle(key, closingOutcomes.cancelled());
        throw err;
      },
    );
    return untilAborted(settled, signal);
  }
}
