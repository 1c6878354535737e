import { Hono } from "hono";
import type { AppDeps } from "../../http/index.js";

/** `GET /graphs`: the graphs this server serves, for a client choosing one for a new thread. */
export function graphsRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  app.get("/graphs", (c) => c.json(deps.threads.graphs()));
  return app;
}
