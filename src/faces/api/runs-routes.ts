import { Hono } from "hono";
import { parseEventId } from "../../protocol/index.js";
import type { ActiveRun } from "../../runs/index.js";
import { type AppDeps, parseBody, principalOf, sseResponse, threadParam, waitingResponse } from "../../http/index.js";
import { resumeBody, runBody } from "./schemas.js";

/** `POST …/runs`, `POST …/resume`, `POST …/cancel`, `GET …/stream` under `/threads/:thread_id`. */
export function runsRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  const { heartbeatMs } = deps;

  const streamRun = (run: ActiveRun, clientSignal: AbortSignal) =>
    sseResponse({
      runId: run.runId,
      events: (signal) => deps.runs.events(run.runId, -1, signal),
      clientSignal,
      onClientGone: () => deps.runs.clientGone(run),
      heartbeatMs,
      log: deps.log,
    });

  app.post("/:thread_id/runs", async (c) => {
    const threadId = threadParam(c);
    const body = await parseBody(c, runBody);
    const run = await deps.runs.startMessage(principalOf(c), {
      threadId,
      message: body.message,
      onDisconnect: body.on_disconnect,
      graphId: body.graph_id,
    });
    return streamRun(run, c.req.raw.signal);
  });

  app.post("/:thread_id/resume", async (c) => {
    const threadId = threadParam(c);
    const body = await parseBody(c, resumeBody);
    const wantsStream = (c.req.header("accept") ?? "").includes("text/event-stream");
    // Nobody is watching a detached resume, so nobody can disconnect from it.
    const onDisconnect = wantsStream ? (body.on_disconnect ?? "cancel") : "continue";
    const run = await deps.runs.startResume(principalOf(c), {
      threadId,
      interruptId: body.interrupt_id,
      decisions: body.decisions,
      answers: body.answers ?? [],
      onDisconnect,
      via: "api",
    });
    // Calls of a quorum interrupt still wait: no run, whatever the client asked for.
    if ("waiting_on" in run) return waitingResponse(c, run.waiting_on);
    if (wantsStream) return streamRun(run, c.req.raw.signal);
    return c.json({ run_id: run.runId }, 202);
  });

  app.post("/:thread_id/cancel", async (c) => c.json(await deps.runs.cancel(principalOf(c), threadParam(c), "api")));

  app.get("/:thread_id/stream", async (c) => {
    const threadId = threadParam(c);
    const runId = await deps.threads.latestRun(principalOf(c), threadId);
    const last = parseEventId(c.req.header("last-event-id") ?? c.req.query("last_event_id") ?? "");
    // An id from an older run means the client has seen none of the latest: replay it whole.
    const afterSeq = last && last.runId === runId ? last.seq : -1;
    // Nothing left to send (no run yet, or the client has the terminal event): 204 is what makes
    // a browser's EventSource stop reconnecting; a 200 with an empty body makes it retry forever.
    if (!runId || !(await deps.runs.hasEventsAfter(runId, afterSeq))) return c.body(null, 204);
    return sseResponse({
      runId,
      events: (signal) => deps.runs.events(runId, afterSeq, signal),
      clientSignal: c.req.raw.signal,
      heartbeatMs,
      log: deps.log,
    });
  });

  return app;
}
