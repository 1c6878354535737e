/** How a model call failed, as the `error` event's code says it. */
export type ModelFailureCode = "model_error" | "model_timeout";

/**
 * The model endpoint failed (down, 4xx/5xx, garbage: `model_error`) or went silent past a
 * deadline (`model_timeout`). Its message is safe to show a person.
 */
export class ModelCallError extends Error {
  constructor(
    message: string,
    options?: { cause?: unknown },
    readonly code: ModelFailureCode = "model_error",
  ) {
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
