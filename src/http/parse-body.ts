import type { Context } from "hono";
import type { z } from "zod";
import { AppError, formatIssues, refusals } from "../protocol/index.js";

/**
 * JSON nested deeper than this is refused before anything walks it (hashing, storing, logging):
 * the body itself plus the 32 levels `metadata` may have.
 */
export const MAX_JSON_DEPTH = 33;
/** How much of a path from the request an error message may echo. */
const ECHO_CHARS = 64;

/** The client went away while sending its body: nothing to answer, one log line. */
export class BodyAborted extends Error {
  override name = "BodyAborted";
}

/** Reads and validates a JSON body at the edge; every failure is `invalid_request` with a readable reason. */
export async function parseBody<T extends z.ZodType>(c: Context, schema: T, optional = false): Promise<z.infer<T>> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    if (err instanceof AppError) throw err; // the body limit's refusal
    throw new BodyAborted(err instanceof Error ? err.message : String(err));
  }
  let raw: unknown = {};
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch {
      throw refusals.bodyNotJson();
    }
  } else if (!optional) {
    throw refusals.bodyRequired();
  }
  if (depthOver(raw, MAX_JSON_DEPTH)) throw refusals.bodyTooDeep(MAX_JSON_DEPTH);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw refusals.badBody(formatIssues(parsed.error.issues, { max: 3, clip: ECHO_CHARS }));
  return parsed.data;
}

/** Whether `value` nests objects or arrays deeper than `max`; iterative, so no depth can overflow it. */
export function depthOver(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) if (child && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}
