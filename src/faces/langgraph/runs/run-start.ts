import type { Principal } from "../../../auth/index.js";
import type { AppDeps } from "../../../http/index.js";
import { type Answer, refusals } from "../../../protocol/index.js";
import type { ActiveRun, FrameRequest, ResumeDecision, ThreadSnapshot } from "../../../runs/index.js";
import { bindResume, refuseWithoutOpen } from "../../../gate/index.js";
import { graphOfAssistant } from "./assistant-id.js";
import { readRunAsk, requestedCheckpoint, type RunCreate } from "./run-request.js";

/** What a run request led to: a run, or decisions on single calls of a quorum interrupt that still waits. */
export type RunStarted = { run: ActiveRun } | { waitingOn: readonly string[] };

export interface RunStartRequest {
  p: Principal;
  threadId: string;
  body: RunCreate;
  onDisconnect: "cancel" | "continue";
  frames?: FrameRequest;
}

/**
 * Starts what a LangGraph-shaped request asks for (a message, or a resume in any of LangGraph's
 * forms) through the same run service as tollgate's own routes. Both LangGraph faces start runs here.
 */
export async function startRun(deps: Pick<AppDeps, "runs" | "threads">, o: RunStartRequest): Promise<RunStarted> {
  const { p, threadId, body, onDisconnect, frames } = o;
  const ask = readRunAsk(body);
  const graph = graphOfAssistant(deps.threads.catalog(), body.assistant_id);
  const from = requestedCheckpoint(body);
  // Read at most once: for a named checkpoint, for a resume; a plain message reads nothing here.
  let read: Promise<ThreadSnapshot> | undefined;
  const thread = () => (read ??= deps.threads.snapshot(p, threadId));
  // Naming the head is what every run does (useStream sends it each time); an earlier checkpoint
  // is a fork, which the run service allows only from where every approved call is held.
  const fork = from !== undefined && from !== (await thread()).checkpoint?.id ? from : undefined;
  if (ask.kind === "message") {
    const { message, clientMessageId } = ask;
    const run = await deps.runs.startMessage(p, { threadId, message, clientMessageId, onDisconnect, graphId: graph.id, frames, fromCheckpoint: fork });
    return { run };
  }
  if (fork !== undefined) throw refusals.resumeAtHead();
  const snapshot = await thread();
  if (snapshot.row.graph_id !== graph.id) throw refusals.graphMismatch(snapshot.row.graph_id);
  if (!snapshot.pending) refuseWithoutOpen(snapshot.row);
  const bound = bindResume(ask.resume, snapshot.pending);
  // Unchecked here: the run service's door holds every face's resume to `POST /threads/{id}/resume`'s schema.
  const run = await deps.runs.startResume(p, {
    threadId,
    interruptId: bound.interruptId,
    decisions: bound.decisions as readonly ResumeDecision[] | undefined,
    answers: bound.answers as readonly Answer[] | undefined,
    onDisconnect,
    frames,
    via: "langgraph",
  });
  return "waiting_on" in run ? { waitingOn: run.waiting_on } : { run };
}
