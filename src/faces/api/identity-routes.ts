import { Hono } from "hono";
import { type AppDeps, principalOf } from "../../http/index.js";

/** `GET /me` and `GET /approvals`: who the caller is, and what waits for their decision. */
export function identityRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  app.get("/me", (c) => {
    const p = principalOf(c);
    return c.json({ sub: p.sub, roles: [...p.roles] });
  });
  app.get("/approvals", async (c) => c.json(await deps.threads.approvals(principalOf(c))));
  return app;
}
