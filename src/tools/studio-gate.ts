import { hashArgs } from "../gate/index.js";
import { closingOutcomes, DEFAULT_REASON, NO_DECISION } from "../protocol/index.js";
import { checkpointsOf, type ResumedCall, resumedDecision } from "./studio-resume.js";
import { callKey } from "./tool-context.js";
import type { ToolOutcome } from "./tool-outcome.js";

/*
 * Written against the shape of `ToolGate` rather than importing it: tool-gate.ts hands this gate
 * out, and the two files would otherwise import each other.
 */

/** A claimed call: the arguments it was claimed with, and its outcome once it ended. */
interface Claim {
  argsHash: string;
  outcome: Promise<ToolOutcome>;
}

/**
 * Claims of approved calls, per checkpointer (one per `langgraph dev` server): nothing hands a
 * tool a ledger outside a tollgate server, and the claims must last as long as the checkpoints
 * they guard, so that a replay of the step never runs a call again.
 */
const claimsBySaver = new WeakMap<object, Map<string, Claim>>();

/** Set, on the global object, in a process that hosts a tollgate server (any copy of the package). */
const SERVING = Symbol.for("tollgate.serving");

/**
 * Marks this process as a tollgate server's: from then on only a run's own gate counts. A call
 * whose config lost the run's gate (a node that invoked a tool with a config of its own making)
 * is refused rather than trusted on the checkpoint's resume, which bypasses the server's ledger.
 */
export function refuseStudioGates(): void {
  (globalThis as Record<symbol, unknown>)[SERVING] = true;
}

/** What `studioGate` gives the tool: a `ToolGate`. */
export interface StudioGate {
  permit(call: ResumedCall): { decision: { call_id: string; approved: boolean; name: string }; execute(work: () => Promise<ToolOutcome>): Promise<ToolOutcome> };
  decision(callId: string): undefined;
  covers(callId: string): boolean;
  refused(call: { id: string; name: string }): void;
}

/**
 * The gate of a tool called outside any tollgate run, inside a LangGraph run that keeps
 * checkpoints (`langgraph dev`, a plain `graph.invoke` with a checkpointer). It trusts whoever
 * resumed: a call runs when LangGraph's `Command({ resume })` approved exactly it (id, tool, the
 * arguments as approved or edited), once per process; a rejection answers with its reason.
 * Nothing here enforces policies, four eyes, quorum or expiry: only a tollgate server does.
 * Undefined without a checkpointer (no resume can have been delivered) and in a process that
 * serves tollgate (see `refuseStudioGates`): then nothing runs.
 */
export function studioGate(configurable: Record<string, unknown> | undefined): StudioGate | undefined {
  const saver = checkpointsOf(configurable);
  if (!configurable || !saver || (globalThis as Record<symbol, unknown>)[SERVING]) return undefined;
  const claims = claimsBySaver.get(saver) ?? new Map<string, Claim>();
  claimsBySaver.set(saver, claims);
  return {
    // The checkpoints are read asynchronously: the permit reads them before it runs anything, and
    // answers the refusal itself when they hold no approval for this call.
    permit: (call) => ({
      decision: { call_id: call.id, approved: true, name: call.name },
      execute: (work) => runIfResumed({ call, configurable, claims, work }),
    }),
    decision: () => undefined,
    covers: () => false,
    refused: () => undefined,
  };
}

interface ResumedRun {
  call: ResumedCall;
  configurable: Record<string, unknown>;
  claims: Map<string, Claim>;
  work: () => Promise<ToolOutcome>;
}

/** Runs `work` at most once if the resume approved this call; else the refusal the tool answers. */
async function runIfResumed({ call, configurable, claims, work }: ResumedRun): Promise<ToolOutcome> {
  const d = await resumedDecision(call, configurable);
  if (!d) return closingOutcomes.noApproval();
  if (d.type === "undecided") return closingOutcomes.rejected(NO_DECISION);
  if (d.type === "reject") return closingOutcomes.rejected(d.reason ?? DEFAULT_REASON);
  const key = callKey(String(configurable.thread_id), call.id);
  const argsHash = hashArgs(call.args);
  const held = claims.get(key);
  // The same call id with other arguments is not the call that ran: it does not run either.
  if (held) return held.argsHash === argsHash ? held.outcome : closingOutcomes.noApproval();
  const edited = d.edited.length ? { edited: d.edited } : {};
  // Claimed before the tool's code starts (no await in between): that is what makes it run once.
  const outcome = work().then(
    (o) => ({ ...o, ...edited }),
    (err: unknown) => {
      // The tool's code only throws here for an abort it gave in to, before committing.
      claims.set(key, { argsHash, outcome: Promise.resolve(closingOutcomes.cancelled()) });
      throw err;
    },
  );
  claims.set(key, { argsHash, outcome: outcome.catch(() => closingOutcomes.cancelled()) });
  return outcome;
}
