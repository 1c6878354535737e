import type { Context, MiddlewareHandler } from "hono";
import type { Authenticator, Principal } from "../auth/index.js";

const KEY = "principal";

/**
 * Authenticates every request it covers before anything else reads it (bodies included), and keeps
 * the principal on the context for the routes. Refusals are `unauthorized`, answered by `onError`.
 */
export function authenticate(auth: Authenticator): MiddlewareHandler {
  return async (c, next) => {
    c.set(KEY as never, (await auth.authenticate(credentials(c))) as never);
    await next();
  };
}

/**
 * The `Authorization` header; under `/langgraph`, LangGraph's SDK sends its key as `x-api-key`
 * instead, which is looked up exactly like a bearer token (`Authorization` wins when both come).
 */
function credentials(c: Context): string | undefined {
  const authorization = c.req.header("authorization");
  if (authorization !== undefined || !c.req.path.startsWith("/langgraph/")) return authorization;
  const key = c.req.header("x-api-key");
  return key === undefined ? undefined : `Bearer ${key}`;
}

/** The caller, as `authenticate` found it. */
export function principalOf(c: Context): Principal {
  const p = c.get(KEY as never) as Principal | undefined;
  // Only reachable if a route were mounted outside the middleware: refuse rather than guess.
  if (!p) throw new Error("route reached without authentication");
  return p;
}
