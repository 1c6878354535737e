import { Hono } from "hono";
import type { AppDeps } from "../../http/index.js";
import { assistantsRoutes } from "./runs/assistants-routes.js";
import { protocolRoutes } from "./protocol/protocol-routes.js";
import { runsRoutes } from "./runs/runs-routes.js";
import { storeRoutes } from "./store/store-routes.js";
import { threadsRoutes } from "./runs/threads-routes.js";

export { assistantIdOf } from "./runs/assistant-id.js";
export { LANGGRAPH_OPENAPI } from "./openapi-endpoints.js";
export { protocolUpgrade } from "./protocol/socket-upgrade.js";

/**
 * LangGraph's API (the Agent Protocol that the SDK's `Client`, `useStream`, Agent Chat UI and
 * Studio speak), mounted at `/langgraph`: the same runs, gate and rules as tollgate's own routes,
 * seen through LangGraph's shapes. A second face, not a second engine.
 */
export function langGraphApi(deps: AppDeps): Hono {
  const app = new Hono();
  app.route("/assistants", assistantsRoutes(deps));
  app.route("/threads", threadsRoutes(deps));
  app.route("/threads", runsRoutes(deps));
  app.route("/threads", protocolRoutes(deps));
  app.route("/store", storeRoutes());
  return app;
}

/** `/info` and `/ok`: what a client checks before it has a token. */
export function langGraphMeta(version: string): Hono {
  const app = new Hono();
  app.get("/info", (c) => c.json({ version, context: "js", flags: { assistants: true, crons: false, langsmith: false } }));
  app.get("/ok", (c) => c.json({ ok: true }));
  return app;
}
