/** The model endpoint failed (down, 4xx/5xx, garbage). Its message is safe to show a person. */
export class ModelCallError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelCallError";
  }
}

/** One line, no stack, bounded: what a client may see of an upstream failure. */
export function describeModelFailure(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const line = raw.split("\n")[0]!.trim() || "unknown failure";
  return `Model call failed: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`;
}
