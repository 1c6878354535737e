import { type Context, Hono } from "hono";
import type { Principal } from "../../../auth/index.js";
import { refusals } from "../../../protocol/index.js";
import type { ActiveRun, FrameRequest } from "../../../runs/index.js";
import { type AppDeps, parseBody, principalOf, threadParam, waitingResponse } from "../../../http/index.js";

import { runObject } from "./resources.js";
import { frameRequest, type RunCreate, runCreateBody, streamModes } from "./run-request.js";
import { startRun } from "./run-start.js";
import { finalResult, runStream } from "./run-stream.js";
import { parsePosition } from "./stream-frames.js";

/** A run that started, and who started it on which thread. */
interface Started {
  run: ActiveRun;
  p: Principal;
  threadId: string;
}

/** A resume that decided single calls of a quorum interrupt while others still wait: its answer. */
interface Waiting {
  waiting: Response;
}

/** Runs under `/langgraph/threads/{id}/runs`: start (streamed, in the background, or waited on), read, rejoin, cancel. */
export function runsRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  const { heartbeatMs, log } = deps;

  /** Starts what the body asks for through the same run service as tollgate's own routes. */
  async function start(c: Context, body: RunCreate, o: { onDisconnect: "cancel" | "continue"; frames?: FrameRequest }): Promise<Started | Waiting> {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const started = await startRun(deps, { p, threadId, body, ...o });
    // Decisions on single calls of a quorum interrupt, others still open: no run to stream or wait on.
    if ("waitingOn" in started) return { waiting: waitingResponse(c, started.waitingOn) };
    return { run: started.run, p, threadId };
  }

  app.post("/:thread_id/runs/stream", async (c) => {
    const body = await parseBody(c, runCreateBody);
    const onDisconnect = body.on_disconnect ?? "continue";
    const started = await start(c, body, { onDisconnect, frames: frameRequest(body) });
    if ("waiting" in started) return started.waiting;
    const { run, p, threadId } = started;
    return runStream({
      runs: deps.runs,
      threads: deps.threads,
      principal: p,
      threadId,
      runId: run.runId,
      graphId: run.graph.id,
      modes: streamModes(body.stream_mode),
      clientSignal: c.req.raw.signal,
      onClientGone: () => deps.runs.clientGone(run),
      heartbeatMs,
      log,
    });
  });

  app.post("/:thread_id/runs", async (c) => {
    const body = await parseBody(c, runCreateBody);
    // Kept for whoever joins its stream while it runs.
    const started = await start(c, body, { onDisconnect: "continue", frames: frameRequest(body) });
    if ("waiting" in started) return started.waiting;
    const { run, p, threadId } = started;
    const row = await deps.threads.run(p, threadId, run.runId);
    c.header("Content-Location", `/threads/${threadId}/runs/${run.runId}`);
    return c.json({ ...runObject(row, await deps.threads.row(p, threadId)), status: "pending" });
  });

  app.post("/:thread_id/runs/wait", async (c) => {
    const body = await parseBody(c, runCreateBody);
    const started = await start(c, body, { onDisconnect: "continue" });
    if ("waiting" in started) return started.waiting;
    const { run, p, threadId } = started;
    c.header("Content-Location", `/threads/${threadId}/runs/${run.runId}`);
    return c.json(await finalResult({ runs: deps.runs, threads: deps.threads, principal: p, threadId, runId: run.runId, signal: c.req.raw.signal }));
  });

  app.get("/:thread_id/runs", async (c) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const limit = boundedInt(c.req.query("limit"), { def: 10, min: 1, max: 1000 });
    const offset = boundedInt(c.req.query("offset"), { def: 0, min: 0, max: 100_000 });
    const thread = await deps.threads.row(p, threadId);
    return c.json((await deps.threads.runs(p, threadId, { limit, offset })).map((r) => runObject(r, thread)));
  });

  app.get("/:thread_id/runs/:run_id", async (c) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const row = await deps.threads.run(p, threadId, c.req.param("run_id"));
    return c.json(runObject(row, await deps.threads.row(p, threadId)));
  });

  app.get("/:thread_id/runs/:run_id/join", async (c) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const row = await deps.threads.run(p, threadId, c.req.param("run_id"));
    return c.json(await finalResult({ runs: deps.runs, threads: deps.threads, principal: p, threadId, runId: row.run_id, signal: c.req.raw.signal }));
  });

  app.get("/:thread_id/runs/:run_id/stream", async (c) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const row = await deps.threads.run(p, threadId, c.req.param("run_id"));
    const thread = await deps.threads.row(p, threadId);
    const modes = c.req.queries("stream_mode");
    return runStream({
      runs: deps.runs,
      threads: deps.threads,
      principal: p,
      threadId,
      runId: row.run_id,
      graphId: thread.graph_id,
      modes: streamModes(modes?.length ? modes : ["values", "messages-tuple", "updates"]),
      after: parsePosition(c.req.header("last-event-id")),
      clientSignal: c.req.raw.signal,
      heartbeatMs,
      log,
    });
  });

  app.post("/:thread_id/runs/:run_id/cancel", async (c) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const row = await deps.threads.run(p, threadId, c.req.param("run_id"));
    const thread = await deps.threads.row(p, threadId);
    // Only the run in flight is stopped; a run that has ended stays as it ended.
    if (row.ended_at === null && thread.latest_run_id === row.run_id) await deps.runs.cancel(p, threadId, "api");
    const wait = ["1", "true"].includes(c.req.query("wait") ?? "");
    if (!wait) return c.body(null, 202);
    for await (const _ of deps.runs.events(row.run_id, -1, c.req.raw.signal)) {
      // drains the log to its terminal event: the run has ended when this loop does
    }
    return c.body(null, 204);
  });

  return app;
}

/** A query parameter as an integer from `min` to `max` (`def` when absent); else `400`. */
function boundedInt(raw: string | undefined, range: { def: number; min: number; max: number }): number {
  const { def, min, max } = range;
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw refusals.badRunsPage(min, max);
  return n;
}
