import { Hono } from "hono";
import { refusals } from "../../protocol/index.js";
import { type AppDeps, principalOf } from "../../http/index.js";

/** `GET /metrics`: the Prometheus text exposition, for the `metrics` and `admin` roles (anyone with auth off). */
export function metricsRoutes(deps: Pick<AppDeps, "access" | "metrics">): Hono {
  const app = new Hono();
  app.get("/metrics", async (c) => {
    if (!deps.access.mayReadMetrics(principalOf(c))) throw refusals.metricsNeedRole();
    const body = await deps.metrics.render();
    return c.body(body, 200, { "content-type": deps.metrics.contentType, "cache-control": "no-store" });
  });
  return app;
}
