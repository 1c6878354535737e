import type { Context, MiddlewareHandler } from "hono";
import type { Authenticator, Principal } from "../auth/index.js";

const KEY = "principal";

/**
 * Authenticates every request it covers before anything else reads it (bodies included), and keeps
 * the principal on the context for the routes. Refusals are `unauthorized`, answered by `onError`.
 */
export function authenticate(auth: Authenticator): MiddlewareHandler {
  return async (c, next) => {
    c.set(KEY as never, (await auth.authenticate(c.req.header("authorization"))) as never);
    await next();
  };
}

/** The caller, as `authenticate` found it. */
export function principalOf(c: Context): Principal {
  const p = c.get(KEY as never) as Principal | undefined;
  // Only reachable if a route were mounted outside the middleware: refuse rather than guess.
  if (!p) throw new Error("route reached without authentication");
  return p;
}
