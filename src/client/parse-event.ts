import { formatIssues, protocolEventSchema, type ProtocolEvent } from "../protocol/index.js";
import { protocolError } from "./errors.js";
import type { SseMessage } from "./sse-reader.js";

/**
 * Turns one SSE message into a validated protocol event: `event` is the type, `data` the JSON
 * object of the other fields. Anything else is a `protocol_error`.
 */
export function parseEvent(message: SseMessage): ProtocolEvent {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch (err) {
    throw protocolError(`event ${message.id ?? "(no id)"}: data is not JSON`, err);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw protocolError(`event ${message.id ?? "(no id)"}: data is not a JSON object`);
  }
  // The frame's `event` field wins over a stray `type` key in the data: it is what the server
  // framed, and what a browser EventSource would dispatch on.
  const result = protocolEventSchema.safeParse({ ...data, type: message.event });
  if (!result.success) {
    const issues = formatIssues(result.error.issues, { root: "(root)" });
    throw protocolError(`event ${message.id ?? "(no id)"} (${message.event ?? "no type"}) is invalid: ${issues}`);
  }
  return result.data;
}
