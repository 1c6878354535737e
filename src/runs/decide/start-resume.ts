import { randomUUID } from "node:crypto";
import { refusals } from "../../protocol/index.js";
import type { Principal } from "../../auth/index.js";
import { resumeInput } from "../../graph/index.js";
import type { ActiveRun, RunContext } from "../run-context.js";
import { NO_EDITS, prepareEdits, type PreparedEdits } from "../start/edit-check.js";
import { beginRun, type BeginDeps, launchRun, type LaunchDeps } from "../start/run-launch.js";
import type { StartDoor } from "../start/start-door.js";
import { seeThread } from "../threads/thread-access.js";
import { checkedResume } from "./checked-resume.js";
import { reportDecision } from "./report-decision.js";
import { openGate, ProgressConflict, type ResumeRequest, type WaitingGate } from "./resume-gate.js";

/** How often a decision is taken again when others on the same interrupt keep landing first. */
const PROGRESS_RETRIES = 20;

/** What a resume reads itself, and what the edit check, the gate, the report and the launch take. */
export type ResumeDeps = Pick<RunContext, "access" | "redactor" | "store" | "clock" | "graphs"> &
  Parameters<typeof prepareEdits>[0] &
  Parameters<typeof openGate>[0] &
  Parameters<typeof reportDecision>[0] &
  BeginDeps &
  LaunchDeps;

/**
 * The one door every face's decision comes through: `o.p`'s decisions on the open interrupt, named
 * call by call (`decisions`: tollgate's API, LangGraph's) or as one choice on the calls a face
 * showed (`shown`: Slack, email), which the gate turns into the calls `o.p` decides now. Held to
 * `POST …/resume`'s schema whatever the face; the gate's checks throw the contract's codes, so
 * one decision gets one answer everywhere. The gate opens (and the run is registered) before
 * this returns, so a cancel that comes next finds the run; edits are checked against the
 * checkpoint first, which takes a read.
 */
export async function startResume(ctx: ResumeDeps, o: { p: Principal; request: ResumeRequest; door: StartDoor }): Promise<ActiveRun | WaitingGate> {
  const { p, door } = o;
  const req = checkedResume(o.request);
  const { threadId, interruptId } = req;
  door.refuseIfClosing();
  await seeThread(ctx, p, threadId); // nothing is read for a caller who may not see the thread
  // A reason is a person's words on their way into the audit, the interrupt, webhooks and the
  // model's history: scrubbed once, here, so every one of them holds the same text.
  const { scrubber } = ctx.redactor;
  const decisions = (req.decisions ?? []).map((d) => (d.reason === undefined ? d : { ...d, reason: scrubber.scrub(d.reason) }));
  const choice = req.shown?.choice;
  const shown = req.shown && choice && !choice.approve ? { ...req.shown, choice: { ...choice, reason: scrubber.scrub(choice.reason) } } : req.shown;
  // Edits of this resume, and those taken earlier on an interrupt decided call by call: checked
  // again on every try, since another decision may have edited the call meanwhile. A resume
  // without edits reads nothing here; the gate asks for them if earlier edits need binding.
  const prepare = () => prepareEdits(ctx, { threadId, interruptId, decisions });
  const first = decisions.some((d) => d.edited_args !== undefined) ? await prepare() : NO_EDITS;
  door.refuseIfClosing();
  const scrubbed = { ...req, ...(req.decisions ? { decisions } : {}), ...(shown ? { shown } : {}) };
  return openResume(ctx, { p, req: scrubbed, door, edits: { first, prepare } });
}

/** `edits.first`: the edits checked before, for the first try; `edits.prepare` checks them again for a retry. */
async function openResume(
  ctx: ResumeDeps,
  o: { p: Principal; req: ResumeRequest; door: StartDoor; edits: { first: PreparedEdits; prepare: () => Promise<PreparedEdits> } },
): Promise<ActiveRun | WaitingGate> {
  const { p, req, door } = o;
  const { first, prepare } = o.edits;
  const { threadId, interruptId, decisions = [], onDisconnect = "cancel" } = req;
  const runId = randomUUID();
  let tries = 0;
  const claim = () =>
    retryOnProgressConflict(async () => {
      const edits = tries++ === 0 ? first : await prepare();
      return ctx.store.transaction(async (tx) => {
        const opened = await openGate(ctx, tx, { p, req, edits, runId, now: ctx.clock.now(), admit: () => door.admit(p.sub) });
        if ("waiting_on" in opened) return opened; // decisions on single calls; others still wait, no run
        await tx.runs.start(runId, threadId, { kind: "resume" });
        return opened;
      });
    });
  // If the claim's commit went in unseen, the decision is not used up: the settler reopens it.
  // A choice on the calls shown approves at most those.
  const approved = req.shown ? (req.shown.choice.approve ? Object.keys(req.shown.versions) : []) : decisions.filter((d) => d.approved).map((d) => d.call_id);
  const reopen = { interruptId, approved };
  return beginRun(ctx, {
    threadId,
    runId,
    claim,
    reopen,
    launch: (gate, controller) => {
      reportDecision(ctx, gate.report); // committed: `beginRun` launches only after the claim
      if ("waiting_on" in gate) return gate;
      const resume = { interruptId, approved: gate.decisions.filter((d) => d.approved).map((d) => d.call_id) };
      // The continuation still answers the same person's message: calls it asks for next are theirs too.
      return launchRun(ctx, {
        threadId,
        runId,
        controller,
        graph: ctx.graphs.forThread(gate.graphId),
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
