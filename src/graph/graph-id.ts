/**
 * What a graph id may be: it travels in URLs, JSON bodies, log lines and the threads table, so
 * plain characters only, and short.
 */
export const GRAPH_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Throws a one-line error unless `graphId` matches `GRAPH_ID_PATTERN`. */
export function checkGraphId(graphId: string): void {
  if (!GRAPH_ID_PATTERN.test(graphId)) {
    throw new Error(`graph id ${quote(graphId)} is not allowed: use 1 to 64 letters, digits, "_" or "-"`);
  }
}

/** A string as a JSON literal, cut short: an id or path in a message stays on one readable line. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}
