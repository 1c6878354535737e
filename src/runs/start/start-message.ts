import { randomUUID } from "node:crypto";
import { refusals, threadNotFound } from "../../protocol/index.js";
import type { Principal } from "../../auth/index.js";
import { encodeRunInput, inputMessage, type RunInput, type ServedGraph } from "../../graph/index.js";
import type { ActiveRun, RunContext } from "../run-context.js";
import type { FrameRequest } from "../stream/graph-frames.js";
import { claimRefusal } from "./claim-refusal.js";
import { forkPoint, refuseForkBeforeApprovals } from "./fork-check.js";
import { beginRun, type BeginDeps, launchRun, type LaunchDeps } from "./run-launch.js";
import type { StartDoor } from "./start-door.js";

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

/** What starting a message run reads itself, and what the fork check, the claim and the launch take. */
export type MessageStartDeps = Pick<RunContext, "graphs" | "redactor" | "store" | "access"> & Parameters<typeof forkPoint>[0] & BeginDeps & LaunchDeps;

/**
 * A new user message from `o.p`. Creates the thread (owned by `o.p`) if needed. Someone else's
 * thread is `thread_not_found`, as if it did not exist; then `forbidden` without the `user` role;
 * then `thread_busy` / `awaiting_approval`. A refusal writes nothing.
 */
export async function startMessage(ctx: MessageStartDeps, o: { p: Principal; req: MessageRequest; door: StartDoor }): Promise<ActiveRun> {
  const { p, req, door } = o;
  const { threadId, message, onDisconnect = "cancel" } = req;
  door.refuseIfClosing();
  // A new thread gets the graph named (or the default); an unknown name writes nothing.
  const named = req.graphId !== undefined ? ctx.graphs.pick(req.graphId) : ctx.graphs.fallback();
  const fork = req.fromCheckpoint !== undefined ? await forkPoint(ctx, p, { threadId, checkpointId: req.fromCheckpoint }) : undefined;
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
  const { scrubber } = ctx.redactor;
  // One transaction (one commit) for everything a run's start writes; a throw rolls it all back.
  // The run row keeps the message: it is durable before the model is called.
  const claim = () =>
    ctx.store.transaction(async (tx) => {
      // Several graphs and none named: an existing thread runs its own; a new one must name one.
      const graphId = named?.id ?? (await tx.threads.get(threadId))?.graph_id ?? ctx.graphs.pick(undefined).id;
      const thread = await tx.threads.ensure(threadId, p.sub, graphId);
      if (!ctx.access.owns(p, thread.owner)) throw threadNotFound(threadId);
      graph = ctx.graphs.forThread(thread.graph_id, req.graphId); // a thread keeps its graph
      if (!ctx.access.mayStartRuns(p)) throw refusals.startNeedsUser();
      door.admit(p.sub);
      const claimed = await tx.threads.claimIdle(threadId, runId);
      if (!claimed.ok) throw claimRefusal(threadId, claimed.reason); // rolls back the thread `ensure` made
      if (fork) await refuseForkBeforeApprovals(tx, threadId, fork);
      await tx.threads.setTitle(threadId, scrubber.scrub(message).replace(/\s+/g, " ").trim().slice(0, TITLE_CHARS));
      await tx.runs.start(runId, threadId, { kind: "message", input: encodeRunInput({ ...userMessage, content: scrubber.scrub(message) }) });
    });
  return beginRun(ctx, {
    threadId,
    runId,
    claim,
    reopen: undefined,
    launch: (_, controller) =>
      launchRun(ctx, {
        threadId,
        runId,
        controller,
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
