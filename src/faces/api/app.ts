import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError, ERROR_STATUS, type ErrorBody, refusals } from "../../protocol/index.js";
import { type AppDeps, authenticate, BodyAborted, loggedPath, MAX_BODY_BYTES } from "../../http/index.js";
import { hostGuard, jsonBodies, originGuard } from "./edge-guard.js";
import { graphsRoutes } from "./graphs-routes.js";
import { identityRoutes } from "./identity-routes.js";
import { openApiRoutes } from "./openapi.js";
import { metricsRoutes } from "./metrics-routes.js";
import { storageFaultError } from "../../runs/index.js";
import { runsRoutes } from "./runs-routes.js";
import { threadsRoutes } from "./threads-routes.js";
import { webPageRoutes } from "./web-page.js";

export type { AppDeps } from "../../http/index.js";

const RETRY_AFTER_SECONDS = 1;

/** The HTTP app: one sub-app per resource; only `onError` turns error codes into statuses. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.get("/healthz", async (c) => {
    // A read, so a held write lock or a full disk (reads still work) do not fail it.
    if (await deps.databaseReadable()) return c.json({ ok: true });
    c.header("Retry-After", String(RETRY_AFTER_SECONDS));
    return c.json({ ok: false, checks: { database: "unavailable" } }, 503);
  });

  // The contract's order: invalid_host → forbidden_origin (and CORS) → 401 → 415 → 400 (body).
  app.use(hostGuard(deps.edge.allowedHosts));
  // Emailed links check their own origin (their form posts send `Origin: null` under no-referrer)
  // and carry their credential in the path: before the origin guard and bearer auth.
  if (deps.decide) app.route("/decide", deps.decide);
  for (const guard of originGuard(deps.edge.corsOrigins)) app.use(guard);
  // The page and the API's description need no token: the page asks for one when the API answers 401.
  app.route("/", webPageRoutes(deps.webDir));
  app.route("/", openApiRoutes(deps.langgraph?.openapi));
  if (deps.langgraph) app.route("/langgraph", deps.langgraph.meta);
  // Signed by the channel (Slack), not by a bearer token; forms, not JSON: before both guards.
  if (deps.integrations) app.route("/integrations", deps.integrations);
  // Everything below needs a principal; with auth off, everyone is `anonymous`. Before the body
  // limit, so an unauthenticated client learns nothing from how its body is judged.
  app.use(authenticate(deps.auth));
  app.use(jsonBodies(deps.edge.corsOrigins));
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw refusals.bodyTooLarge();
      },
    }),
  );

  app.route("/", identityRoutes(deps));
  app.route("/", graphsRoutes(deps));
  app.route("/", metricsRoutes(deps));
  app.route("/threads", threadsRoutes(deps));
  app.route("/threads", runsRoutes(deps));
  if (deps.langgraph) app.route("/langgraph", deps.langgraph.api);

  app.notFound((c) => c.json<ErrorBody>(bodyOf(refusals.noSuchEndpoint()), 404));

  app.onError((err, c) => {
    // The client left mid-upload (a body read by the body limit, chunked, ends up here as a plain
    // error): nobody reads this answer.
    if (err instanceof BodyAborted || (!(err instanceof AppError) && c.req.raw.signal.aborted)) {
      // The client left mid-upload: nobody reads this answer; one line, no stack.
      deps.log.warn("request body aborted", { method: c.req.method, path: loggedPath(c.req.path), reason: (err as Error).message });
      return c.json<ErrorBody>(bodyOf(refusals.bodyUnreadable()), 400);
    }
    const storage = storageFaultError(err);
    if (storage) {
      deps.log.warn("storage unavailable", { method: c.req.method, path: loggedPath(c.req.path), message: (err as Error).message });
      err = storage;
    }
    if (err instanceof AppError) {
      const status = ERROR_STATUS[err.code];
      // Every 429 and 503 is a "try again shortly": say when.
      if (status === 503 || status === 429) c.header("Retry-After", String(err.retryAfterSeconds ?? RETRY_AFTER_SECONDS));
      if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="tollgate"');
      const call = err.call !== undefined ? { call: err.call } : {};
      return c.json<ErrorBody>({ error: { code: err.code, message: deps.scrub(err.message), ...call } }, status);
    }
    deps.log.error("unhandled error", { method: c.req.method, path: loggedPath(c.req.path), err });
    return c.json<ErrorBody>(bodyOf(refusals.internal()), 500);
  });

  return app;
}

/** The JSON body of a refusal answered without `onError`'s scrubbing: its words are all the catalogue's. */
const bodyOf = (e: AppError): ErrorBody => ({ error: { code: e.code, message: e.message } });
