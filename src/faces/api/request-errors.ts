import { RequestError } from "@hono/node-server";
import { type AppError, type ErrorBody, refusals } from "../../protocol/index.js";

/**
 * What the Node adapter answers for a request it cannot even turn into a `Request` (a malformed
 * `Host`, a path that is not a URL): by default an empty 400 in no documented shape. Here it is
 * the contract's JSON error, like every other.
 */
export function adapterErrorResponse(err: unknown): Response {
  // The adapter's RequestError carries no code, only its message ("Missing/Invalid host header").
  const hostProblem = err instanceof RequestError && /host/i.test(err.message);
  const refused: AppError = hostProblem ? refusals.wrongHost() : refusals.requestUnreadable();
  const body: ErrorBody = { error: { code: refused.code, message: refused.message } };
  return new Response(JSON.stringify(body), { status: 400, headers: { "content-type": "application/json" } });
}
