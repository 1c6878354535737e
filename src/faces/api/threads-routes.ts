import { Hono } from "hono";
import { refusals } from "../../protocol/index.js";
import { type AppDeps, parseBody, principalOf, threadParam } from "../../http/index.js";
import { createThreadBody, listThreadsQuery } from "./schemas.js";

/** `POST /threads`, `GET /threads`, `GET /threads/:thread_id`, `GET /threads/:thread_id/audit`. */
export function threadsRoutes(deps: AppDeps): Hono {
  const app = new Hono();

  app.post("/", async (c) => {
    const body = await parseBody(c, createThreadBody, true);
    return c.json(await deps.threads.create(principalOf(c), { threadId: body.thread_id, metadata: body.metadata, graphId: body.graph_id }), 201);
  });

  app.get("/", async (c) => {
    const q = listThreadsQuery.safeParse({ limit: c.req.query("limit"), cursor: c.req.query("cursor") });
    if (!q.success) throw refusals.badThreadsPage();
    return c.json(await deps.threads.list(principalOf(c), q.data.limit, q.data.cursor));
  });

  app.get("/:thread_id", async (c) => c.json(await deps.threads.view(principalOf(c), threadParam(c))));

  app.get("/:thread_id/audit", async (c) => c.json(await deps.threads.audit(principalOf(c), threadParam(c))));

  return app;
}
