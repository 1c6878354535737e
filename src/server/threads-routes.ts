import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { AppDeps } from "./app-deps.js";
import { parseBody } from "./parse-body.js";
import { createThreadBody } from "./schemas.js";
import { threadParam } from "./thread-param.js";

/** `POST /threads`, `GET /threads/:thread_id`. */
export function threadsRoutes(deps: AppDeps): Hono {
  const app = new Hono();

  app.post("/", async (c) => {
    const body = await parseBody(c, createThreadBody, true);
    const row = deps.threads.create(body.thread_id ?? randomUUID(), body.metadata);
    return c.json({ thread_id: row.thread_id, status: row.status }, 201);
  });

  app.get("/:thread_id", async (c) => c.json(await deps.readThread(threadParam(c))));

  return app;
}
