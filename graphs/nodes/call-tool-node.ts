import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ToolCall } from "@langchain/core/messages/tool";
import { hashArgs, runToolCall, type ToolOutcome, type ToolRegistry, untilAborted } from "../../src/tools/index.js";
import { readDecisions, type GateDecision } from "../decisions.js";
import type { ExecutionLedger } from "../execution-ledger.js";
import type { AgentStateType, AgentUpdate } from "../state.js";
import { closingOutcomes, outcomeMessage, unansweredCalls } from "../tool-messages.js";

/**
 * The gate. Runs after the interrupt, with the decisions in `configurable.decisions`. Only a call
 * approved by id (and, when a hash is given, with unchanged arguments) runs, and at most once:
 * the ledger is claimed durably before the tool is called.
 */
export function createCallToolNode(registry: ToolRegistry, ledger: ExecutionLedger) {
  return async function call_tool(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentUpdate> {
    const decisions = readDecisions(config);
    const threadId = (config.configurable?.thread_id as string | undefined) ?? "local";
    const messages = [];
    // One by one, in the model's order: a person may approve some and reject others.
    for (const call of unansweredCalls(state.messages)) {
      // A cancel between two approved calls stops the next one from starting at all.
      config.signal?.throwIfAborted();
      const outcome = await decide(call, decisions.get(call.id!), threadId, config.signal);
      messages.push(outcomeMessage(call, outcome));
    }
    return { messages, rounds: 0 };
  };

  async function decide(
    call: ToolCall,
    d: GateDecision | undefined,
    threadId: string,
    signal: AbortSignal | undefined,
  ): Promise<ToolOutcome> {
    if (!d) return closingOutcomes.rejected("no decision");
    if (!d.approved) return closingOutcomes.rejected(d.reason ?? "User denied");
    const argsHash = hashArgs(call.args);
    if (d.args_hash !== undefined && d.args_hash !== argsHash) {
      return { status: "error", error: "arguments differ from the approved call; not executed" };
    }
    const key = `${threadId}:${call.id}`;
    const claim = ledger.claim(key, { threadId, callId: call.id!, name: call.name, argsHash });
    if (claim.kind === "settled") return claim.outcome;
    if (claim.kind === "in_doubt") return closingOutcomes.outcomeUnknown();
    // The ledger is settled when the tool's code really ends, even after this run stopped waiting:
    // a tool that ignores the abort and commits later is recorded with what it did.
    const settled = runToolCall(registry, { id: call.id!, name: call.name, args: call.args }, { signal, threadId }).then(
      (outcome) => (ledger.settle(key, outcome), outcome),
      (err: unknown) => {
        // runToolCall only throws for an abort that the tool itself gave in to, before committing.
        ledger.settle(key, closingOutcomes.cancelled());
        throw err;
      },
    );
    return untilAborted(settled, signal);
  }
}
