import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ToolMessage } from "@langchain/core/messages";
import { closingOutcomes, MALFORMED_CALL_NAME, runToolCall, type ToolOutcome, type ToolRegistry, untilAborted, validateArgs } from "../../tools/index.js";
import type { MessagesState } from "../graph-state.js";
import type { KitNode } from "./kit-node.js";
import { lastAssistant, outcomeMessage, unansweredCalls, unparsableError } from "../tool-messages.js";

/**
 * Runs, at once, every call of the batch that needs no approval: read-only tools, plus calls that
 * cannot run anyway (unknown tool, malformed call, bad arguments). Valid irreversible calls are
 * left for the gate.
 */
export function createToolsNode(registry: ToolRegistry): KitNode {
  return async function tools(state: MessagesState, config: LangGraphRunnableConfig): Promise<{ messages: ToolMessage[] }> {
    const ai = lastAssistant(state.messages);
    const threadId = config.configurable?.thread_id as string | undefined;
    const results = await Promise.all(
      unansweredCalls(state.messages).map(async (call): Promise<ReturnType<typeof outcomeMessage> | null> => {
        const request = { id: call.id!, name: call.name, args: call.args };
        if (call.name === MALFORMED_CALL_NAME) return outcomeMessage(call, closingOutcomes.malformed());
        const unparsable = unparsableError(ai, request.id);
        if (unparsable) return outcomeMessage(call, { status: "invalid_args", error: unparsable });
        if (registry.needsApproval(call.name)) {
          const invalid = await validateArgs(registry, request);
          // Asking a person to approve a call that cannot run would only waste their time.
          return invalid ? outcomeMessage(call, { status: "invalid_args", error: invalid } satisfies ToolOutcome) : null;
        }
        // A read-only tool that ignores the abort must not hold up a cancel.
        const outcome = await untilAborted(runToolCall(registry, request, { signal: config.signal, threadId }), config.signal);
        return outcomeMessage(call, outcome);
      }),
    );
    return { messages: results.filter((m) => m !== null) };
  };
}
