import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError, ERROR_STATUS, type ErrorBody } from "../protocol/index.js";
import type { AppDeps } from "./app-deps.js";
import { runsRoutes } from "./runs-routes.js";
import { threadsRoutes } from "./threads-routes.js";

export type { AppDeps } from "./app-deps.js";

/** The HTTP app: one sub-app per resource; only `onError` turns error codes into statuses. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.use(
    bodyLimit({
      maxSize: 256 * 1024,
      onError: () => {
        throw new AppError("invalid_request", "Request body is too large");
      },
    }),
  );

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.route("/threads", threadsRoutes(deps));
  app.route("/threads", runsRoutes(deps));

  app.notFound((c) => c.json<ErrorBody>({ error: { code: "not_found", message: "No such endpoint" } }, 404));

  app.onError((err, c) => {
    if (err instanceof AppError) {
      return c.json<ErrorBody>({ error: { code: err.code, message: err.message } }, ERROR_STATUS[err.code]);
    }
    deps.log.error("unhandled error", { method: c.req.method, path: c.req.path, err });
    return c.json<ErrorBody>({ error: { code: "internal_error", message: "Internal server error" } }, 500);
  });

  return app;
}
