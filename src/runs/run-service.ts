import { randomUUID } from "node:crypto";
import { CANCEL_REASONS, closingOutcomes, refusals, threadNotFound, type CancelReason } from "../protocol/index.js";
import type { Principal } from "../auth/index.js";
import { isStorageFault, type LoggedEvent, type ThreadRow, type ThreadStatus } from "../store/index.js";
import { storageUnavailable } from "./finish/storage-errors.js";
import { claimRefusal } from "./start/claim-refusal.js";
import { NO_EDITS, prepareEdits, type PreparedEdits } from "./start/edit-check.js";
import { RunAdmission } from "./start/run-admission.js";
import { closeInterrupt } from "./finish/interrupt-closer.js";
import { RunCancelled } from "./run-abort.js";
import type { ActiveRun, RunContext } from "./run-context.js";
import { executeRun } from "./start/run-executor.js";
import { encodeRunInput, inputMessage, resumeInput, RunGate, type RunInput, type RunInputValue, type ServedGraph } from "../graph/index.js";
import type { GateDecision } from "../gate/index.js";
import { RunLog } from "./stream/run-log.js";
import { forkPoint, refuseForkBeforeApprovals } from "./start/fork-check.js";
import type { FrameRequest, GraphFrame } from "./stream/graph-frames.js";
import { checkedResume } from "./decide/checked-resume.js";
import { openGate, ProgressConflict, type ResumeRequest, type WaitingGate } from "./decide/resume-gate.js";
import { ThreadFeed } from "./stream/thread-feed.js";
import { noticeThread, reportDecision } from "./decide/report-decision.js";
import { withFrames } from "./stream/recent-frames.js";
import { cancelRemoteRun, followStoredRun } from "./stream/remote-run.js";
import { seeThread } from "./threads/thread-access.js";

/** Calls a run never reached, when its claim's commit may have gone in unseen. */
const CLAIM_LOST = closingOutcomes.claimLost();

/** How much of the first user message names a thread in lists. */
const TITLE_CHARS = 80;

/** A new user message on a thread. */
export interface MessageRequest {
  threadId: string;
  message: string;
  onDisconnect?: "cancel" | "continue";
  /** The graph a new thread runs; for an existing one, it must be the thread's. */
  graphId?: string;
  /** Chunks of the graph's own stream to record for live listeners, beside the events. */
  frames?: FrameRequest;
  /** An earlier checkpoint of the thread to start from (a fork) instead of its head. */
  fromCheckpoint?: string;
  /** The id the client gave its message (kept beside the server's own, see `RunInput.clientId`). */
  clientMessageId?: string;
}

/** What a claimed run is launched with. */
interface Launch {
  threadId: string;
  runId: string;
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
interface RunStart<T, R> {
  threadId: string;
  runId: string;
  /** Writes the run's claim; `launch` runs only once it has committed. */
  claim: () => Promise<T>;
  /** For a resume: the decision the settler reopens if the claim's commit went in unseen. */
  reopen: ActiveRun["resume"];
  launch: (claimed: T, controller: AbortController) => R;
}

export interface CancelResult {
  thread_id: string;
  cancelled: boolean;
  status: ThreadStatus;
}

/** Starts, resumes, cancels and follows runs. The only way anything runs on a thread. */
export class RunService {
  private closing = false;
  private threadFeed: ThreadFeed | undefined;

  private readonly unsubscribe: () => void;

  /** `admission`: the run-rate and concurrency limits (none when not given). */
  constructor(
    private readonly ctx: RunContext,
    private readonly admission: RunAdmission = new RunAdmission({ perMinute: 0, maxConcurrent: Number.POSITIVE_INFINITY, inFlight: () => 0 }),
  ) {
    this.unsubscribe = ctx.store.bus.subscribe("cancel", (runId, reason) => this.onRemoteCancel(runId, reason));
  }

  /**
   * A new user message from `p`. Creates the thread (owned by `p`) if needed. Someone else's thread
   * is `thread_not_found`, as if it did not exist; then `forbidden` without the `user` role; then
   * `thread_busy` / `awaiting_approval`. A refusal writes nothing.
   */
  async startMessage(p: Principal, req: MessageRequest): Promise<ActiveRun> {
    const { threadId, message, onDisconnect = "cancel" } = req;
    this.refuseIfClosing();
    // A new thread gets the graph named (or the default); an unknown name writes nothing.
    const named = req.graphId !== undefined ? this.ctx.graphs.pick(req.graphId) : this.ctx.graphs.fallback();
    const fork = req.fromCheckpoint !== undefined ? await forkPoint(this.ctx, p, { threadId, checkpointId: req.fromCheckpoint }) : undefined;
    let graph!: ServedGraph;
    const runId = randomUUID();
    // An id of its own, so a repair can move or replace it like any other stored message.
    const userMessage: RunInput = {
      id: randomUUID(),
      content: message,
      ...(fork ? { from: fork.checkpointId } : {}),
      ...(req.clientMessageId ? { clientId: req.clientMessageId } : {}),
    };
    // The rows keep the words scrubbed of secrets, as the checkpoint does; the model reads them whole.
    const { scrubber } = this.ctx.redactor;
    // One transaction (one commit) for everything a run's start writes; a throw rolls it all back.
    // The run row keeps the message: it is durable before the model is called.
    const claim = () =>
      this.ctx.store.transaction(async (tx) => {
        // Several graphs and none named: an existing thread runs its own; a new one must name one.
        const graphId = named?.id ?? (await tx.threads.get(threadId))?.graph_id ?? this.ctx.graphs.pick(undefined).id;
        const thread = await tx.threads.ensure(threadId, p.sub, graphId);
        if (!this.ctx.access.owns(p, thread.owner)) throw threadNotFound(threadId);
        graph = this.ctx.graphs.forThread(thread.graph_id, req.graphId); // a thread keeps its graph
        if (!this.ctx.access.mayStartRuns(p)) throw refusals.startNeedsUser();
        this.admission.admit(p.sub);
        const claimed = await tx.threads.claimIdle(threadId, runId);
        if (!claimed.ok) throw claimRefusal(threadId, claimed.reason); // rolls back the thread `ensure` made
        if (fork) await refuseForkBeforeApprovals(tx, threadId, fork);
        await tx.threads.setTitle(threadId, scrubber.scrub(message).replace(/\s+/g, " ").trim().slice(0, TITLE_CHARS));
        await tx.runs.start(runId, threadId, { kind: "message", input: encodeRunInput({ ...userMessage, content: scrubber.scrub(message) }) });
      });
    return this.begin({
      threadId,
      runId,
      claim,
      reopen: undefined,
      launch: (_, controller) =>
        this.launch(controller, {
          threadId,
          runId,
          graph,
          principal: p.sub,
          requester: p.sub,
          onDisconnect,
          input: graph.messageInput(inputMessage(userMessage)),
          decisions: [],
          frames: req.frames,
          from: fork?.checkpointId,
        }),
    });
  }

  /**
   * The one door every face's decision comes through: `p`'s decisions on the open interrupt, named
   * call by call (`decisions`: tollgate's API, LangGraph's) or as one choice on the calls a face
   * showed (`shown`: Slack, email), which the gate turns into the calls `p` decides now. Held to
   * `POST …/resume`'s schema whatever the face; the gate's checks throw the contract's codes, so
   * one decision gets one answer everywhere. The gate opens (and the run is registered) before
   * this returns, so a cancel that comes next finds the run; edits are checked against the
   * checkpoint first, which takes a read.
   */
  async startResume(p: Principal, request: ResumeRequest): Promise<ActiveRun | WaitingGate> {
    const req = checkedResume(request);
    const { threadId, interruptId } = req;
    this.refuseIfClosing();
    await seeThread(this.ctx, p, threadId); // nothing is read for a caller who may not see the thread
    // A reason is a person's words on their way into the audit, the interrupt, webhooks and the
    // model's history: scrubbed once, here, so every one of them holds the same text.
    const { scrubber } = this.ctx.redactor;
    const decisions = (req.decisions ?? []).map((d) => (d.reason === undefined ? d : { ...d, reason: scrubber.scrub(d.reason) }));
    const choice = req.shown?.choice;
    const shown = req.shown && choice && !choice.approve ? { ...req.shown, choice: { ...choice, reason: scrubber.scrub(choice.reason) } } : req.shown;
    // Edits of this resume, and those taken earlier on an interrupt decided call by call: checked
    // again on every try, since another decision may have edited the call meanwhile. A resume
    // without edits reads nothing here; the gate asks for them if earlier edits need binding.
    const prepare = () => prepareEdits(this.ctx, { threadId, interruptId, decisions });
    const first = decisions.some((d) => d.edited_args !== undefined) ? await prepare() : NO_EDITS;
    this.refuseIfClosing();
    return this.openResume(p, { ...req, ...(req.decisions ? { decisions } : {}), ...(shown ? { shown } : {}) }, { first, prepare });
  }

  /** `edits.first`: the edits checked before, for the first try; `edits.prepare` checks them again for a retry. */
  private async openResume(p: Principal, req: ResumeRequest, edits: { first: PreparedEdits; prepare: () => Promise<PreparedEdits> }): Promise<ActiveRun | WaitingGate> {
    const { first, prepare } = edits;
    const { threadId, interruptId, decisions = [], onDisconnect = "cancel" } = req;
    const runId = randomUUID();
    let tries = 0;
    const claim = () =>
      retryOnProgressConflict(async () => {
        const edits = tries++ === 0 ? first : await prepare();
        return this.ctx.store.transaction(async (tx) => {
          const opened = await openGate(this.ctx, tx, { p, req, edits, runId, now: this.ctx.clock.now(), admit: () => this.admission.admit(p.sub) });
          if ("waiting_on" in opened) return opened; // decisions on single calls; others still wait, no run
          await tx.runs.start(runId, threadId, { kind: "resume" });
          return opened;
        });
      });
    // If the claim's commit went in unseen, the decision is not used up: the settler reopens it.
    // A choice on the calls shown approves at most those.
    const approved = req.shown ? (req.shown.choice.approve ? Object.keys(req.shown.versions) : []) : decisions.filter((d) => d.approved).map((d) => d.call_id);
    const reopen = { interruptId, approved };
    return this.begin({
      threadId,
      runId,
      claim,
      reopen,
      launch: (gate, controller) => {
        reportDecision(this.ctx, gate.report); // committed: `begin` launches only after the claim
        if ("waiting_on" in gate) return gate;
        const resume = { interruptId, approved: gate.decisions.filter((d) => d.approved).map((d) => d.call_id) };
        // The continuation still answers the same person's message: calls it asks for next are theirs too.
        return this.launch(controller, {
          threadId,
          runId,
          graph: this.ctx.graphs.forThread(gate.graphId),
          principal: p.sub,
          requester: gate.requester,
          onDisconnect,
          // The gate's decisions travel in the run's gate; what the graph's own interrupts wait for, as LangGraph's resume.
          input: resumeInput(gate.resumeValues),
          decisions: gate.decisions,
          resumes: gate.callIds,
          resume,
          frames: req.frames,
        });
      },
    });
  }

  /**
   * Stops the run in flight (its model request and tools see the abort) or closes the open
   * interrupt. Idempotent; answers once the thread has settled.
   */
  async cancel(p: Principal, threadId: string, reason: CancelReason = "api"): Promise<CancelResult> {
    let thread = await seeThread(this.ctx, p, threadId);
    if (!this.ctx.access.owns(p, thread.owner)) {
      throw refusals.onlyOwnerCancels();
    }
    let cancelled = false;
    // Runs whose claim is still on its way to the database: each ends `cancelled` as it begins.
    const starting = [...this.ctx.inFlight.starting.values()].filter((s) => s.threadId === threadId);
    for (const s of starting) s.controller.abort(new RunCancelled(reason));
    for (const s of starting) {
      const started = await s.started;
      if (started) cancelled = (await this.stopLocal(started, reason)) || cancelled;
    }
    const run = this.ctx.inFlight.active.get(threadId);
    if (run) cancelled = (await this.stopLocal(run, reason)) || cancelled;
    // Read again after any local run ended: one that was committing its end as the cancel came
    // may have opened an interrupt, which the cancel still closes.
    if (run || starting.length) thread = (await this.ctx.store.threads.get(threadId)) ?? thread;
    if (thread.status === "waiting_human" && thread.open_interrupt_id) {
      const closed = await closeInterrupt(this.ctx, { threadId, interruptId: thread.open_interrupt_id, to: "cancelled", by: p.sub });
      cancelled = closed || cancelled;
      // Lost to a resume that began meanwhile (maybe on another replica): that run is the one to stop.
      if (!closed) thread = (await this.ctx.store.threads.get(threadId)) ?? thread;
    }
    if (thread.status === "running" && !this.ctx.inFlight.active.has(threadId)) cancelled = (await this.stopHeld(thread, reason)) || cancelled;
    const status = (await this.ctx.store.threads.get(threadId))!.status;
    // The run stopped, but the database has not taken its end yet: say so, so the caller retries.
    if (status === "running" && !this.ctx.inFlight.active.has(threadId) && this.ctx.settler.holds(threadId)) throw storageUnavailable();
    return { thread_id: threadId, cancelled, status };
  }

  private async stopLocal(run: ActiveRun, reason: CancelReason): Promise<boolean> {
    run.controller.abort(new RunCancelled(reason));
    await run.done;
    return run.outcome === "cancelled";
  }

  /** The thread is `running` with no run of this process in it: a run elsewhere, or a holder that could not finish. */
  private async stopHeld(thread: ThreadRow, reason: CancelReason): Promise<boolean> {
    const { store, settler } = this.ctx;
    if (settler.holds(thread.thread_id) || thread.replica_id === store.replicas.id) {
      // Held by a run or closer here that could not finish its writes: settle it now if the
      // database allows (else this throws storage_unavailable, and a retry is safe).
      await settler.settleNow(thread.thread_id);
      return false;
    }
    // Another replica's: it hears the cancel and stops the run; its lease covers a dead one.
    if (!thread.holder_id) return false;
    const ended = await cancelRemoteRun(store, thread.holder_id, reason);
    return ended?.outcome === "cancelled";
  }

  /** A cancel another replica relayed: stops the run if it is this process's. */
  private onRemoteCancel(runId: string, reason: string): void {
    const why = new RunCancelled((CANCEL_REASONS as readonly string[]).includes(reason) ? (reason as CancelReason) : "api");
    this.ctx.inFlight.starting.get(runId)?.controller.abort(why);
    for (const run of this.ctx.inFlight.active.values()) if (run.runId === runId) run.controller.abort(why);
  }

  /** The client of a stream went away: cancel if the run asked for that. */
  clientGone(run: ActiveRun): void {
    if (run.onDisconnect === "cancel" && this.ctx.inFlight.active.get(run.threadId) === run) {
      run.controller.abort(new RunCancelled("client"));
    }
  }

  /** Event batches of a run after `afterSeq`: live ones as they come, or the stored log of a finished run. */
  events(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    // The follower itself, not a generator around it: a wrapper's `yield*` costs promises per batch.
    const live = this.ctx.inFlight.logs.get(runId);
    return live ? live.follow(afterSeq, signal) : followStoredRun(this.ctx.store, runId, { afterSeq, signal });
  }

  /**
   * A run's events from its start with the frames of its graph's stream that it records (see
   * `FrameRequest`), while the run is live in this process or ended here lately (`RecentFrames`);
   * otherwise its stored events alone.
   */
  eventsWithFrames(runId: string, signal?: AbortSignal): AsyncGenerator<Array<LoggedEvent | GraphFrame>> {
    const { logs, recentFrames } = this.ctx.inFlight;
    const live = logs.get(runId);
    if (live) return live.followWithFrames(signal);
    const stored = followStoredRun(this.ctx.store, runId, { afterSeq: -1, signal });
    const frames = recentFrames.of(runId);
    return frames.length ? withFrames(stored, frames) : stored;
  }

  /** The thread-centric view of threads: runs in order, their events, and notices of change. */
  get feed(): ThreadFeed {
    return (this.threadFeed ??= new ThreadFeed(this.ctx, this));
  }

  /** Whether a stream after `afterSeq` has anything to send: false once the terminal event is behind it. */
  async hasEventsAfter(runId: string, afterSeq: number): Promise<boolean> {
    const live = this.ctx.inFlight.logs.get(runId);
    if (live) return live.hasEventsAfter(afterSeq);
    const { runs } = this.ctx.store;
    // The row before the log (see `followStoredRun`): an end committed in between is not missed.
    const row = await runs.get(runId);
    if ((await runs.maxSeq(runId)) > afterSeq) return true;
    // Running on another replica: more is coming.
    return row !== undefined && row.ended_at === null;
  }

  /** Resolves once no thread waits for the database to take its settling writes. */
  settled(): Promise<void> {
    return this.ctx.settler.idle();
  }

  /** Cancels every run in flight with reason `shutdown`; open interrupts stay as they are. */
  async shutdown(): Promise<void> {
    this.closing = true;
    this.unsubscribe();
    const shutdown = new RunCancelled("shutdown");
    const starting = [...this.ctx.inFlight.starting.values()];
    for (const s of starting) s.controller.abort(shutdown);
    const launched = (await Promise.all(starting.map((s) => s.started))).filter((r) => r !== undefined);
    const runs = [...new Set([...launched, ...this.ctx.inFlight.active.values()])];
    for (const r of runs) r.controller.abort(shutdown);
    await Promise.all(runs.map((r) => r.done));
    await this.ctx.persister.flush();
    this.ctx.settler.stop(); // what it still holds, the lease sweep (or start-up recovery) settles
  }

  private refuseIfClosing(): void {
    if (this.closing) throw refusals.shuttingDown();
  }

  /**
   * Writes the run's claim, then launches it. Meanwhile the run is `starting`: a cancel arriving
   * while the claim is on its way to the database aborts it, and the run then ends `cancelled` as
   * soon as it begins (the claim may commit after the cancel read the thread).
   */
  private async begin<T, R extends ActiveRun | WaitingGate>(o: RunStart<T, R>): Promise<R> {
    const { threadId, runId, claim, reopen, launch } = o;
    const controller = new AbortController();
    let started!: (run: ActiveRun | undefined) => void;
    this.ctx.inFlight.starting.set(runId, { threadId, controller, started: new Promise((resolve) => (started = resolve)) });
    let run: ActiveRun | undefined;
    try {
      const launched = launch(await claim(), controller);
      if (!("waiting_on" in launched)) run = launched;
      noticeThread(this.ctx, threadId);
      return launched;
    } catch (err) {
      // The database's answer was lost, not necessarily the commit: if the claim went in, the
      // settler hands the thread back (a compare-and-set: nothing happens if it did not).
      if (isStorageFault(err)) void this.ctx.settler.adopt({ threadId, holderId: runId, fallback: CLAIM_LOST, reopen });
      throw err;
    } finally {
      this.ctx.inFlight.starting.delete(runId);
      started(run);
    }
  }

  private launch(controller: AbortController, l: Launch): ActiveRun {
    const { threadId, runId, resume } = l;
    // Registered in the same tick as the claim: a cancel arriving next finds it.
    const log = new RunLog(runId, { persister: this.ctx.persister, redactor: this.ctx.redactor, meter: this.ctx.metrics.runStarted(resume ? "resume" : "message") });
    const gate = new RunGate({
      threadId,
      runId,
      ledger: this.ctx.store.ledger,
      decisions: l.decisions,
      resumes: l.resumes,
      onRefusal: (call) => this.ctx.gateRefused(run, call),
    });
    const run: ActiveRun = {
      runId,
      threadId,
      graph: l.graph,
      gate,
      log,
      controller,
      done: Promise.resolve(),
      onDisconnect: l.onDisconnect,
      principal: l.principal,
      requester: l.requester,
      resume,
      frames: l.frames,
      from: l.from,
    };
    this.ctx.inFlight.active.set(threadId, run);
    this.ctx.inFlight.logs.set(runId, log);
    run.done = executeRun(this.ctx, run, l.input);
    return run;
  }
}

/** How often a decision is taken again when others on the same interrupt keep landing first. */
const PROGRESS_RETRIES = 20;

/**
 * Runs `claim` again while a decision on the same interrupt committed between its read and its
 * write (a quorum's approvers racing): each try reads the progress afresh, so none is lost.
 */
async function retryOnProgressConflict<T>(claim: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await claim();
    } catch (err) {
      if (!(err instanceof ProgressConflict)) throw err;
      if (attempt >= PROGRESS_RETRIES) throw refusals.racing();
    }
  }
}
