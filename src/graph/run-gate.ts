import type { ExecutionLedger } from "../ledger/index.js";
import { callKey, closingOutcomes, type GateDecision, type GatedCall, type GatePermit, hashArgs, type ToolGate, type ToolOutcome } from "../tools/index.js";

/** The execution ledger's key for a call: the same for every attempt at it, and the tool's idempotency key. */
export const ledgerKey = callKey;

export interface RunGateOptions {
  threadId: string;
  /** Given by the engine: the ledger then claims only for the run that holds the thread. */
  runId?: string;
  ledger: ExecutionLedger;
  /** The decisions this run carries, bound to their calls (name and argument hash). */
  decisions?: readonly GateDecision[];
  /** The calls of the interrupt this run resumes (a call in it without a decision was not approved). */
  resumes?: Iterable<string>;
  /** Told of each refusal (the server logs and counts them). */
  onRefusal?: (call: { id: string; name: string }) => void;
}

/**
 * One run's gate: the approvals it carries, live until the run ends. An approval opens the gate
 * for exactly one call id, one tool and one argument hash; the call then runs through the
 * ledger, so at most once ever, whoever calls the tool and however often.
 */
export class RunGate implements ToolGate {
  private readonly decisions: ReadonlyMap<string, GateDecision>;
  private readonly resumed: ReadonlySet<string>;
  private live = true;

  constructor(private readonly o: RunGateOptions) {
    this.decisions = new Map((o.decisions ?? []).map((d) => [d.call_id, d]));
    this.resumed = new Set(o.resumes ?? this.decisions.keys());
  }

  /** Ends the run's approvals: a tool called after this (a detached promise, a late node) is refused. */
  close(): void {
    this.live = false;
  }

  decision(callId: string): GateDecision | undefined {
    return this.decisions.get(callId);
  }

  covers(callId: string): boolean {
    return this.resumed.has(callId);
  }

  permit(call: GatedCall): GatePermit | undefined {
    const d = this.decisions.get(call.id);
    if (!this.live || !d?.approved) return undefined;
    if (d.name !== undefined && d.name !== call.name) return undefined;
    const expected = d.run_args_hash ?? d.args_hash;
    const argsHash = hashArgs(call.args);
    if (expected !== undefined && expected !== argsHash) return undefined;
    return { decision: d, execute: (work) => this.execute(call, argsHash, work) };
  }

  refused(call: { id: string; name: string }): void {
    this.o.onRefusal?.(call);
  }

  private async execute(call: GatedCall, argsHash: string, work: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
    const { ledger, threadId, runId } = this.o;
    const key = ledgerKey(threadId, call.id);
    // Claimed durably before the tool's code starts: that is what makes it run at most once.
    const claim = await ledger.claim(key, { threadId, callId: call.id, name: call.name, argsHash, runId });
    if (claim.kind === "settled") return claim.outcome;
    if (claim.kind === "in_doubt") return closingOutcomes.outcomeUnknown();
    // Settled when the tool's code really ends, even after the run stopped waiting for it: a tool
    // that ignores the abort and commits later is recorded with what it did.
    return work().then(
      async (outcome) => {
        await ledger.settle(key, outcome);
        return outcome;
      },
      async (err: unknown) => {
        // The tool's code only throws here for an abort it gave in to, before committing.
        await ledger.settle(key, closingOutcomes.cancelled());
        throw err;
      },
    );
  }
}
