import type { Context } from "hono";

/**
 * The answer to decisions on single calls of an interrupt decided call by call while others still
 * wait: no run started, whatever the client asked for. One body for every face.
 */
export function waitingResponse(c: Context, waitingOn: readonly string[]): Response {
  return c.json({ status: "waiting_human", waiting_on: waitingOn, run_id: null }, 202);
}
