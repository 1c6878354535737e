import { RequestError } from "@hono/node-server";
import type { ErrorBody } from "../../protocol/index.js";

/**
 * What the Node adapter answers for a request it cannot even turn into a `Request` (a malformed
 * `Host`, a path that is not a URL): by default an empty 400 in no documented shape. Here it is
 * the contract's JSON error, like every other.
 */
export function adapterErrorResponse(err: unknown): Response {
  // The adapter's RequestError carries no code, only its message ("Missing/Invalid host header").
  const hostProblem = err instanceof RequestError && /host/i.test(err.message);
  const body: ErrorBody = hostProblem
    ? { error: { code: "invalid_host", message: "This server does not answer for that Host" } }
    : { error: { code: "invalid_request", message: "The request could not be read" } };
  return new Response(JSON.stringify(body), { status: 400, headers: { "content-type": "application/json" } });
}
