import { isDeepStrictEqual } from "node:util";
import { type Context, Hono } from "hono";
import { z } from "zod";
import { AppError, refusals } from "../../../protocol/index.js";
import { type AppDeps, parseBody, principalOf, THREAD_ID, threadParam } from "../../../http/index.js";
import { graphOfAssistant } from "./assistant-id.js";
import { pastState, threadMetadata, threadObject, threadState, threadStatus } from "./resources.js";

export const threadCreateBody = z
  .object({
    thread_id: z.string().regex(THREAD_ID, "thread_id must match [A-Za-z0-9_-]{1,128}").optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    if_exists: z.enum(["raise", "do_nothing"]).optional(),
    graph_id: z.string().optional(),
  })
  .passthrough();

export const threadSearchBody = z
  .object({
    metadata: z.record(z.string(), z.unknown()).optional(),
    status: z.enum(["idle", "busy", "interrupted", "error"]).optional(),
    ids: z.array(z.string()).max(1000).optional(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).max(10_000).default(0),
  })
  .passthrough();

const checkpointId = z.string().min(1).max(200);

/** History's query: how many states, and before which checkpoint (an id, or a config naming one, as the SDK sends it). */
export const historyBody = z
  .object({
    limit: z.number().int().min(1).max(1000).default(10),
    before: z
      .union([checkpointId, z.object({ checkpoint_id: checkpointId }).passthrough(), z.object({ configurable: z.object({ checkpoint_id: checkpointId }).passthrough() }).passthrough()])
      .nullish(),
    /** A subgraph's namespace (useStream asks for its subagents' states): none is kept apart here. */
    checkpoint: z.object({ checkpoint_ns: z.string().max(1000).optional() }).passthrough().nullish(),
  })
  .passthrough();
type HistoryQuery = z.infer<typeof historyBody>;

/** `POST …/state/checkpoint`: the checkpoint to read, as the SDK names it. */
export const stateAtBody = z
  .object({
    checkpoint: z.object({ checkpoint_id: checkpointId, checkpoint_ns: z.string().max(1000).optional() }).passthrough(),
    subgraphs: z.boolean().optional(),
  })
  .passthrough();

/** `POST …/state` as the SDK sends it; only a bare `__copy__` of a named checkpoint is taken. */
export const stateWriteBody = z
  .object({
    values: z.unknown().optional(),
    as_node: z.string().max(200).nullish(),
    checkpoint_id: checkpointId.nullish(),
    checkpoint: z.object({ checkpoint_id: checkpointId.nullish(), checkpoint_ns: z.string().max(1000).nullish() }).passthrough().nullish(),
  })
  .passthrough();

/** The checkpoint a state write copies, when that is all it does; undefined for any other write. */
function checkpointCopy(w: z.infer<typeof stateWriteBody>): string | undefined {
  const bare = w.values == null || (Array.isArray(w.values) && w.values.length === 0);
  if (w.as_node !== "__copy__" || !bare || (w.checkpoint?.checkpoint_ns ?? "") !== "") return undefined;
  return w.checkpoint?.checkpoint_id ?? w.checkpoint_id ?? undefined;
}

function checkpointParam(v: string | undefined): string {
  const parsed = checkpointId.safeParse(v);
  if (!parsed.success) throw refusals.checkpointIdLength();
  return parsed.data;
}

function beforeId(before: HistoryQuery["before"]): string | undefined {
  if (before == null) return undefined;
  if (typeof before === "string") return before;
  const named = before as { checkpoint_id?: string; configurable?: { checkpoint_id: string } };
  return named.configurable?.checkpoint_id ?? named.checkpoint_id;
}

/** Threads under `/langgraph/threads`: create, search, read, copy, state (the head or any checkpoint), history. The only state write is a copy of a checkpoint. */
export function threadsRoutes(deps: AppDeps): Hono {
  const app = new Hono();

  app.post("/", async (c) => {
    const p = principalOf(c);
    const body = await parseBody(c, threadCreateBody, true);
    // Metadata may name the graph the way LangGraph's clients do: by graph or assistant id.
    const named = body.graph_id ?? stringOr(body.metadata?.graph_id) ?? stringOr(body.metadata?.assistant_id);
    const graphId = named === undefined ? undefined : graphOfAssistant(deps.threads.catalog(), named).id;
    const { graph_id: _g, assistant_id: _a, ...metadata } = body.metadata ?? {};
    try {
      const made = await deps.threads.create(p, { threadId: body.thread_id, metadata, graphId });
      return c.json(threadObject(await deps.threads.snapshot(p, made.thread_id)));
    } catch (err) {
      if (err instanceof AppError && err.code === "thread_exists" && body.if_exists === "do_nothing" && body.thread_id) {
        return c.json(threadObject(await deps.threads.snapshot(p, body.thread_id)));
      }
      throw err;
    }
  });

  app.post("/search", async (c) => {
    const p = principalOf(c);
    const q = await parseBody(c, threadSearchBody, true);
    const ids = q.ids ? new Set(q.ids) : undefined;
    const rows = await deps.threads.search(p, {
      limit: q.limit,
      offset: q.offset,
      match: (t) =>
        (!ids || ids.has(t.thread_id)) &&
        (q.status === undefined || threadStatus(t) === q.status) &&
        Object.entries(q.metadata ?? {}).every(([k, v]) => isDeepStrictEqual(threadMetadata(t)[k], v)),
    });
    const out = [];
    for (const t of rows) out.push(threadObject(await deps.threads.snapshot(p, t.thread_id)));
    return c.json(out);
  });

  app.get("/:thread_id", async (c) => c.json(threadObject(await deps.threads.snapshot(principalOf(c), threadParam(c)))));

  app.delete("/:thread_id", async (c) => {
    await deps.threads.row(principalOf(c), threadParam(c));
    throw refusals.threadsNotDeleted();
  });

  app.get("/:thread_id/state", async (c) => c.json(threadState(await deps.threads.snapshot(principalOf(c), threadParam(c)))));

  /** The thread at one checkpoint: its head reads with what waits there, an earlier one as history shows it. */
  const stateAt = async (c: Context, checkpoint: string) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const head = await deps.threads.snapshot(p, threadId);
    if (head.checkpoint?.id === checkpoint) return c.json(threadState(head));
    return c.json(pastState(await deps.threads.stateAt(p, threadId, checkpoint), threadId));
  };
  app.get("/:thread_id/state/:checkpoint_id", async (c) => stateAt(c, checkpointParam(c.req.param("checkpoint_id"))));
  app.post("/:thread_id/state/checkpoint", async (c) => stateAt(c, (await parseBody(c, stateAtBody)).checkpoint.checkpoint_id));

  // Only "re-run from here" writes state: a copy of a checkpoint, with no values, under the fork rule.
  app.post("/:thread_id/state", async (c) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    await deps.threads.row(p, threadId);
    // A body that is not a copy, however malformed, is a state write like any other.
    const write = await parseBody(c, stateWriteBody, true).catch((err: unknown) => {
      if (err instanceof AppError && err.code === "invalid_request") return undefined;
      throw err;
    });
    const copyAt = write && checkpointCopy(write);
    if (copyAt === undefined) throw refusals.stateLocked();
    return c.json({ checkpoint: await deps.threads.copyCheckpoint(p, threadId, copyAt) });
  });

  app.post("/:thread_id/copy", async (c) => {
    const p = principalOf(c);
    const copyId = await deps.threads.copy(p, threadParam(c));
    return c.json(threadObject(await deps.threads.snapshot(p, copyId)));
  });

  // The thread's head: tollgate keeps one state per thread for its clients (the checkpoints behind it hold the runs' steps).
  /** The thread's states, newest first: its head (with what waits), then the checkpoints before it. */
  const history = async (c: Context) => {
    const p = principalOf(c);
    const threadId = threadParam(c);
    const q = c.req.method === "POST" ? await parseBody(c, historyBody, true) : historyQuery(c);
    if (q.checkpoint?.checkpoint_ns) return c.json([]);
    const before = beforeId(q.before);
    if (before !== undefined) return c.json((await deps.threads.history(p, threadId, { limit: q.limit, before })).map((s) => pastState(s, threadId)));
    const head = await deps.threads.snapshot(p, threadId);
    if (!head.checkpoint) return c.json([]);
    const past = q.limit > 1 ? await deps.threads.history(p, threadId, { limit: q.limit - 1, before: head.checkpoint.id }) : [];
    return c.json([threadState(head), ...past.map((s) => pastState(s, threadId))]);
  };
  app.post("/:thread_id/history", history);
  app.get("/:thread_id/history", history);

  return app;
}

/** `GET …/history?limit=&before=`. */
function historyQuery(c: Context): HistoryQuery {
  const limit = c.req.query("limit");
  const parsed = historyBody.safeParse({ limit: limit === undefined ? undefined : Number(limit), before: c.req.query("before") });
  if (!parsed.success) throw refusals.badHistoryQuery();
  return parsed.data;
}

function stringOr(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
