import type { Context } from "hono";
import type { z } from "zod";
import { AppError } from "../protocol/index.js";

/** Reads and validates a JSON body at the edge; every failure is `invalid_request` with a readable reason. */
export async function parseBody<T extends z.ZodType>(c: Context, schema: T, optional = false): Promise<z.infer<T>> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new AppError("invalid_request", "Body is not valid JSON");
    }
  } else if (!optional) {
    throw new AppError("invalid_request", "A JSON body is required");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const reason = parsed.error.issues
      .map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
      .join("; ");
    throw new AppError("invalid_request", reason);
  }
  return parsed.data;
}
