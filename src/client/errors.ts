import type { ErrorCode } from "../protocol/index.js";

/**
 * Codes the client raises itself, beside the server's `ErrorCode`s:
 * - `protocol_error`: the server sent something the contract does not allow (bad frame, bad body);
 * - `network_error`: the server could not be reached, or a stream dropped and reconnecting failed;
 * - `http_error`: an error status whose body is not the contract's `{"error": {…}}` (a proxy's page).
 */
export type ClientErrorCode = "protocol_error" | "network_error" | "http_error";

/** A failed call. `status` is the HTTP status, or 0 when no response carried the error. */
export class TollgateError extends Error {
  readonly code: ErrorCode | ClientErrorCode | (string & {});
  readonly status: number;

  /** `o.status`: the HTTP status, or 0; `o.cause`: what the error came from (a network failure, a parse error). */
  constructor(code: string, message: string, o: { status: number; cause?: unknown }) {
    super(message, o.cause === undefined ? undefined : { cause: o.cause });
    this.name = "TollgateError";
    this.code = code;
    this.status = o.status;
  }
}

/** Turns a non-2xx response into the error it carries; reads (and so releases) the body. */
export async function errorFromResponse(response: Response): Promise<TollgateError> {
  // A body cut off mid-read still leaves the status, which is what the caller acts on.
  const text = await response.text().catch(() => "");
  const body = tryParseJson(text);
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (error && typeof error.code === "string") {
    const message = typeof error.message === "string" ? error.message : error.code;
    return new TollgateError(error.code, message, { status: response.status });
  }
  // Not our JSON: a gateway or dev-server page. Keep a short excerpt so the cause is visible.
  const excerpt = text.slice(0, 200);
  return new TollgateError("http_error", `HTTP ${response.status}${excerpt ? `: ${excerpt}` : ""}`, { status: response.status });
}

export function protocolError(message: string, cause?: unknown): TollgateError {
  return new TollgateError("protocol_error", message, { status: 0, cause });
}

export function networkError(message: string, cause?: unknown): TollgateError {
  return new TollgateError("network_error", message, { status: 0, cause });
}

function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // a non-JSON error body is reported as http_error by the caller
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
