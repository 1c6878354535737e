import type { Context } from "hono";
import { z } from "zod";
import { refusals, THREAD_ID_RULE } from "../protocol/index.js";

/** What a thread id may be: the path segment and the bodies that name one. */
export const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;

export const threadIdSchema = z.string().regex(THREAD_ID, THREAD_ID_RULE);

/** The `:thread_id` path parameter, checked against the contract's pattern. */
export function threadParam(c: Context): string {
  const id = c.req.param("thread_id") ?? "";
  if (!THREAD_ID.test(id)) throw refusals.badThreadId();
  return id;
}
