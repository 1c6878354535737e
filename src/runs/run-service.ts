import { randomUUID } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import type { AgentUpdate } from "../../graphs/state.js";
import { AppError, threadNotFound, type CancelReason } from "../protocol/index.js";
import type { Principal } from "../auth/index.js";
import { type LoggedEvent, storageUnavailable, type ThreadStatus } from "../store/index.js";
import { NO_EDITS, prepareEdits, type PreparedEdits } from "./edit-check.js";
import { RunAdmission } from "./run-admission.js";
import { closeInterrupt } from "./interrupt-closer.js";
import { RunCancelled } from "./run-abort.js";
import type { ActiveRun, RunContext } from "./run-context.js";
import { executeRun } from "./run-executor.js";
import { RunLog } from "./run-log.js";
import { openGate, type ResumeDecision } from "./resume-gate.js";
import { seeThread } from "./thread-access.js";

/** How much of the first user message names a thread in lists. */
const TITLE_CHARS = 80;

export interface CancelResult {
  thread_id: string;
  cancelled: boolean;
  status: ThreadStatus;
}

/** Starts, resumes, cancels and follows runs. The only way anything runs on a thread. */
export class RunService {
  private closing = false;

  /** `admission`: the run-rate and concurrency limits (none when not given). */
  constructor(
    private readonly ctx: RunContext,
    private readonly admission: RunAdmission = new RunAdmission(0, Number.POSITIVE_INFINITY, () => 0),
  ) {}

  /**
   * A new user message from `p`. Creates the thread (owned by `p`) if needed. Someone else's thread
   * is `thread_not_found`, as if it did not exist; then `forbidden` without the `user` role; then
   * `thread_busy` / `awaiting_approval`. A refusal writes nothing.
   */
  startMessage(p: Principal, threadId: string, message: string, onDisconnect: "cancel" | "continue" = "cancel"): ActiveRun {
    this.refuseIfClosing();
    const runId = randomUUID();
    // One transaction (one commit) for everything a run's start writes; a throw rolls it all back.
    this.ctx.store.db.transaction(() => {
      const thread = this.ctx.store.threads.ensure(threadId, p.sub);
      if (!this.ctx.access.owns(p, thread.owner)) throw threadNotFound(threadId);
      if (!this.ctx.access.mayStartRuns(p)) throw new AppError("forbidden", "Starting runs needs the role 'user'");
      this.admission.admit(p.sub);
      this.ctx.store.threads.claimIdle(threadId, runId);
      this.ctx.store.threads.setTitle(threadId, message.replace(/\s+/g, " ").trim().slice(0, TITLE_CHARS));
      this.ctx.store.runs.start(runId, threadId, "message");
    })();
    // An id of its own, so a repair can move or replace it like any other stored message.
    const input: AgentUpdate = { messages: [new HumanMessage({ id: randomUUID(), content: message })], rounds: 0, closed: false };
    return this.launch(threadId, runId, p.sub, onDisconnect, input, {});
  }

  /**
   * `p`'s decisions on the open interrupt; the gate's checks throw the contract's codes. Without
   * edits the gate opens (and the run is registered) before this returns, so a cancel that comes
   * next finds the run; edits are checked against the checkpoint first, which takes a read.
   */
  startResume(
    p: Principal,
    threadId: string,
    interruptId: string,
    decisions: readonly ResumeDecision[],
    onDisconnect: "cancel" | "continue" = "cancel",
  ): Promise<ActiveRun> {
    this.refuseIfClosing();
    seeThread(this.ctx, p, threadId); // nothing is read for a caller who may not see the thread
    const open = (edits: PreparedEdits) => this.openResume(p, threadId, interruptId, decisions, edits, onDisconnect);
    if (!decisions.some((d) => d.edited_args !== undefined)) return Promise.resolve(open(NO_EDITS));
    return prepareEdits(this.ctx, threadId, interruptId, decisions).then((edits) => {
      this.refuseIfClosing();
      return open(edits);
    });
  }

  private openResume(
    p: Principal,
    threadId: string,
    interruptId: string,
    decisions: readonly ResumeDecision[],
    edits: PreparedEdits,
    onDisconnect: "cancel" | "continue",
  ): ActiveRun {
    const runId = randomUUID();
    const gate = this.ctx.store.db.transaction(() => {
      const opened = openGate(this.ctx, p, threadId, interruptId, decisions, edits, runId, Date.now(), () => this.admission.admit(p.sub));
      this.ctx.store.runs.start(runId, threadId, "resume");
      return opened;
    })();
    const resume = { interruptId, approved: gate.decisions.filter((d) => d.approved).map((d) => d.call_id) };
    // The continuation still answers the same person's message: calls it asks for next are theirs too.
    return this.launch(threadId, runId, gate.requester, onDisconnect, null, { decisions: gate.decisions }, resume);
  }

  /**
   * Stops the run in flight (its model request and tools see the abort) or closes the open
   * interrupt. Idempotent; answers once the thread has settled.
   */
  async cancel(p: Principal, threadId: string, reason: CancelReason = "api"): Promise<CancelResult> {
    const thread = seeThread(this.ctx, p, threadId);
    if (!this.ctx.access.owns(p, thread.owner)) {
      throw new AppError("forbidden", "Only the thread's owner may cancel; an approver refuses with a resume that rejects");
    }
    let cancelled = false;
    const run = this.ctx.active.get(threadId);
    if (run) {
      run.controller.abort(new RunCancelled(reason));
      await run.done;
      cancelled = run.outcome === "cancelled";
    } else if (thread.status === "waiting_human" && thread.open_interrupt_id) {
      cancelled = await closeInterrupt(this.ctx, threadId, thread.open_interrupt_id, "cancelled", p.sub);
    } else if (thread.status === "running") {
      // Held by a run or closer that could not finish its writes: settle it now if the database
      // allows (else this throws storage_unavailable, and a retry is safe).
      await this.ctx.settler.settleNow(threadId);
    }
    const status = this.ctx.store.threads.get(threadId)!.status;
    // The run stopped, but the database has not taken its end yet: say so, so the caller retries.
    if (status === "running" && !this.ctx.active.has(threadId) && this.ctx.settler.holds(threadId)) throw storageUnavailable();
    return { thread_id: threadId, cancelled, status };
  }

  /** The client of a stream went away: cancel if the run asked for that. */
  clientGone(run: ActiveRun): void {
    if (run.onDisconnect === "cancel" && this.ctx.active.get(run.threadId) === run) {
      run.controller.abort(new RunCancelled("client"));
    }
  }

  /** Event batches of a run after `afterSeq`: live ones as they come, or the stored log of a finished run. */
  async *events(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    const live = this.ctx.live.get(runId);
    if (live) {
      yield* live.follow(afterSeq, signal);
      return;
    }
    const stored = this.ctx.store.runs.read(runId, afterSeq);
    if (stored.length) yield stored;
  }

  /** Whether a stream after `afterSeq` has anything to send: false once the terminal event is behind it. */
  hasEventsAfter(runId: string, afterSeq: number): boolean {
    const live = this.ctx.live.get(runId);
    return live ? live.hasEventsAfter(afterSeq) : this.ctx.store.runs.maxSeq(runId) > afterSeq;
  }

  /** Resolves once no thread waits for the database to take its settling writes. */
  settled(): Promise<void> {
    return this.ctx.settler.idle();
  }

  /** Cancels every run in flight with reason `shutdown`; open interrupts stay as they are. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const runs = [...this.ctx.active.values()];
    for (const r of runs) r.controller.abort(new RunCancelled("shutdown"));
    await Promise.all(runs.map((r) => r.done));
    this.ctx.persister.flush();
    this.ctx.settler.stop(); // what it still holds, start-up recovery settles
  }

  private refuseIfClosing(): void {
    if (this.closing) throw new AppError("shutting_down", "The server is shutting down; try again shortly");
  }

  private launch(
    threadId: string,
    runId: string,
    requester: string,
    onDisconnect: "cancel" | "continue",
    input: AgentUpdate | null,
    configurable: Record<string, unknown>,
    resume?: ActiveRun["resume"],
  ): ActiveRun {
    // Registered in the same tick as the claim: a cancel arriving next finds it.
    const log = new RunLog(runId, this.ctx.persister, this.ctx.redactor);
    const run: ActiveRun = { runId, threadId, log, controller: new AbortController(), done: Promise.resolve(), onDisconnect, requester, resume };
    this.ctx.active.set(threadId, run);
    this.ctx.live.set(runId, log);
    run.done = executeRun(this.ctx, run, input, configurable);
    return run;
  }
}
