import { quote } from "./graph-id.js";

/**
 * Why a graph could not be served, as one line: start-up prints only the message, so a reason
 * spread over lines (or a stack) would bury which graph failed.
 */
export function graphError(graphId: string, reason: string): Error {
  return new Error(`graph ${quote(graphId)}: ${oneLine(reason)}`);
}

/** The first line of a thrown value's message: enough to act on, and it keeps the error on one line. */
export function firstLine(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  return raw.split("\n").find((l) => l.trim())?.trim() ?? "unknown failure";
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, " ");
}
