import type { Principal } from "../../../auth/index.js";
import type { AppDeps } from "../../../http/index.js";
import { AppError, formatIssues } from "../../../protocol/index.js";
import type { ActiveRun, FrameRequest, ThreadSnapshot } from "../../../runs/index.js";
import { bindResume, refuseWithoutOpen, resumeSchema } from "../../../gate/index.js";
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
  if (fork !== undefined) throw new AppError("unsupported", "A resume goes on from the thread's head: it cannot name an earlier checkpoint");
  const snapshot = await thread();
  if (snapshot.row.graph_id !== graph.id) {
    throw new AppError("graph_mismatch", `This thread runs graph '${snapshot.row.graph_id}'; a thread keeps its graph for life`);
  }
  if (!snapshot.pending) refuseWithoutOpen(snapshot.row);
  const bound = bindResume(ask.resume, snapshot.pending);
  // The same edge rules as `POST /threads/{id}/resume`: one decision per call, reasons' length, argument names.
  const checked = resumeSchema.safeParse({ interrupt_id: bound.interruptId, decisions: bound.decisions, answers: bound.answers });
  if (!checked.success) throw new AppError("invalid_request", formatIssues(checked.error.issues, { max: 3, clip: 64 }));
  const run = await deps.runs.startResume(p, {
    threadId,
    interruptId: checked.data.interrupt_id,
    decisions: checked.data.decisions,
    answers: checked.data.answers ?? [],
    onDisconnect,
    frames,
    via: "langgraph",
  });
  return "waiting_on" in run ? { waitingOn: run.waiting_on } : { run };
}
