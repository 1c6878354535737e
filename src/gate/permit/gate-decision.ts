import type { ToolOutcome } from "../../protocol/index.js";

/** One tool call as the gate checks it: the arguments are the call's own, before any schema parsing. */
export interface GatedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** What a person decided on one pending call, carried unchanged from the resume request to the tool. */
export interface GateDecision {
  call_id: string;
  approved: boolean;
  reason?: string;
  /** Hash of the arguments the person was shown; when present, the call must still match it. */
  args_hash?: string;
  /** Top-level arguments the person replaced before approving (a shallow merge; editable tools only). */
  edited_args?: Record<string, unknown>;
  /** The tool the approval is for; a call of another tool under the same id is refused. */
  name?: string;
  /** Hash of the arguments the call runs with (after the edit); the tool refuses any other. */
  run_args_hash?: string;
  /** Argument names the edit really changed (the tool message names them, not their values). */
  edited?: readonly string[];
  /** The tool's preview as the person saw it when approving (its tool reads it in `toolContext`). */
  preview?: unknown;
}

/** A live approval for one call: the only way an irreversible tool's code runs. */
export interface GatePermit {
  decision: GateDecision;
  /**
   * Runs `work` at most once, ever, through the execution ledger: a call that ran before answers
   * its recorded outcome, one caught mid-run by a crash is "outcome unknown". The outcome is
   * recorded when `work` really ends, even after the run stopped waiting for it.
   */
  execute(work: () => Promise<ToolOutcome>): Promise<ToolOutcome>;
}

/**
 * The run's gate, as irreversible tools see it. The run engine puts one in every run's config;
 * the kit's `call_tool` makes one from a `Command({ resume })` value when no engine runs the graph
 * (`langgraph dev`, a plain `graph.invoke`). A tool called outside both reads the approval from
 * LangGraph's own resume (`studioGate`); where there is none, an irreversible tool never runs.
 */
export interface ToolGate {
  /** The approval this run holds for exactly this call (id, tool and arguments), if it is still live. */
  permit(call: GatedCall): GatePermit | undefined;
  /** The decision the run holds for a call id, approved or not. */
  decision(callId: string): GateDecision | undefined;
  /** Whether this run resumes the interrupt that asked about this call (else it has not been asked yet). */
  covers(callId: string): boolean;
  /** Told when a tool refused to run for want of an approval (logged and counted by the server). */
  refused(call: Pick<GatedCall, "id" | "name">): void;
}
