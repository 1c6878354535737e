import { closingOutcomes } from "../../protocol/index.js";
import { isStorageFault } from "../../store/index.js";
import { RunGate, type RunInputValue, type ServedGraph } from "../../graph/index.js";
import type { GateDecision } from "../../gate/index.js";
import type { ActiveRun, RunContext } from "../run-context.js";
import { noticeThread } from "../decide/report-decision.js";
import type { WaitingGate } from "../decide/resume-gate.js";
import type { FrameRequest } from "../stream/graph-frames.js";
import { RunLog } from "../stream/run-log.js";
import { executeRun } from "./run-executor.js";

/** Calls a run never reached, when its claim's commit may have gone in unseen. */
const CLAIM_LOST = closingOutcomes.claimLost();

/** What a claimed run is launched with. */
export interface Launch {
  threadId: string;
  runId: string;
  /** The run's own, which `beginRun` made while the claim was written. */
  controller: AbortController;
  graph: ServedGraph;
  /** Who started it (logs name them). */
  principal: string;
  /** Who sent the message it continues. */
  requester: string;
  onDisconnect: "cancel" | "continue";
  /** The state update a message run starts with; for a resume, what LangGraph resumes with (or null). */
  input: RunInputValue;
  /** The decisions the run's gate carries, bound to their calls. */
  decisions: readonly GateDecision[];
  /** The calls of the interrupt a resume decides. */
  resumes?: readonly string[];
  resume?: ActiveRun["resume"];
  frames?: FrameRequest;
  from?: string;
}

/** A run on its way to start: the claim to write, then what launches it once written. */
export interface RunStart<T, R> {
  threadId: string;
  runId: string;
  /** Writes the run's claim; `launch` runs only once it has committed. */
  claim: () => Promise<T>;
  /** For a resume: the decision the settler reopens if the claim's commit went in unseen. */
  reopen: ActiveRun["resume"];
  launch: (claimed: T, controller: AbortController) => R;
}

/** What `beginRun` reads itself, and what the thread's notice takes. */
export type BeginDeps = Pick<RunContext, "inFlight" | "settler"> & Parameters<typeof noticeThread>[0];

/**
 * Writes the run's claim, then launches it. Meanwhile the run is `starting`: a cancel arriving
 * while the claim is on its way to the database aborts it, and the run then ends `cancelled` as
 * soon as it begins (the claim may commit after the cancel read the thread).
 */
export async function beginRun<T, R extends ActiveRun | WaitingGate>(ctx: BeginDeps, o: RunStart<T, R>): Promise<R> {
  const { threadId, runId, claim, reopen, launch } = o;
  const controller = new AbortController();
  let started!: (run: ActiveRun | undefined) => void;
  ctx.inFlight.starting.set(runId, { threadId, controller, started: new Promise((resolve) => (started = resolve)) });
  let run: ActiveRun | undefined;
  try {
    const launched = launch(await claim(), controller);
    if (!("waiting_on" in launched)) run = launched;
    noticeThread(ctx, threadId);
    return launched;
  } catch (err) {
    // The database's answer was lost, not necessarily the commit: if the claim went in, the
    // settler hands the thread back (a compare-and-set: nothing happens if it did not).
    if (isStorageFault(err)) void ctx.settler.adopt({ threadId, holderId: runId, fallback: CLAIM_LOST, reopen });
    throw err;
  } finally {
    ctx.inFlight.starting.delete(runId);
    started(run);
  }
}

/** What `launchRun` reads itself, and what executing the run takes. */
export type LaunchDeps = Pick<RunContext, "inFlight" | "persister" | "redactor" | "metrics" | "store" | "gateRefused"> & Parameters<typeof executeRun>[0];

/** Registers a claimed run in this process and sets it going; `done` settles when it has ended. */
export function launchRun(ctx: LaunchDeps, l: Launch): ActiveRun {
  const { threadId, runId, resume } = l;
  // Registered in the same tick as the claim: a cancel arriving next finds it.
  const log = new RunLog(runId, { persister: ctx.persister, redactor: ctx.redactor, meter: ctx.metrics.runStarted(resume ? "resume" : "message") });
  const gate = new RunGate({
    threadId,
    runId,
    ledger: ctx.store.ledger,
    decisions: l.decisions,
    resumes: l.resumes,
    onRefusal: (call) => ctx.gateRefused(run, call),
  });
  const run: ActiveRun = {
    runId,
    threadId,
    graph: l.graph,
    gate,
    log,
    controller: l.controller,
    done: Promise.resolve(),
    onDisconnect: l.onDisconnect,
    principal: l.principal,
    requester: l.requester,
    resume,
    frames: l.frames,
    from: l.from,
  };
  ctx.inFlight.active.set(threadId, run);
  ctx.inFlight.logs.set(runId, log);
  run.done = executeRun(ctx, run, l.input);
  return run;
}
