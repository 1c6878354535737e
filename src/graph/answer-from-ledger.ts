import type { ToolCall } from "@langchain/core/messages/tool";
import type { ExecutionLedger } from "../ledger/index.js";
import type { ToolOutcome } from "../tools/index.js";
import { closingOutcomes } from "./tool-messages.js";
import { ledgerKey } from "./run-gate.js";

/**
 * How to answer a call that will never run now (cancel, expiry, restart, a new message): what the
 * ledger knows wins over `fallback`, so a call that ran keeps its recorded result and one caught
 * mid-run is "outcome unknown". Never claims anything.
 */
export function answerFromLedger(ledger: ExecutionLedger, threadId: string, fallback: ToolOutcome) {
  return async (call: Pick<ToolCall, "id">): Promise<ToolOutcome> => {
    const known = await ledger.peek(ledgerKey(threadId, call.id!));
    if (known?.kind === "settled") return known.outcome;
    return known?.kind === "in_doubt" ? closingOutcomes.outcomeUnknown() : fallback;
  };
}
