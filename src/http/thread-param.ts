import type { Context } from "hono";
import { AppError } from "../protocol/index.js";

/** What a thread id may be: the path segment and the bodies that name one. */
export const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;

export const threadIdSchema = z.string().regex(THREAD_ID, "thread_id must match [A-Za-z0-9_-]{1,128}");
import { z } from "zod";

/** The `:thread_id` path parameter, checked against the contract's pattern. */
export function threadParam(c: Context): string {
  const id = c.req.param("thread_id") ?? "";
  if (!THREAD_ID.test(id)) throw new AppError("invalid_request", "thread_id must match [A-Za-z0-9_-]{1,128}");
  return id;
}
