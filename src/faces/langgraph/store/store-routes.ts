import { Hono } from "hono";
import { z } from "zod";
import { parseBody } from "../../../http/index.js";

/** `POST /store/namespaces`: LangGraph's prefix, suffix, depth and page; there is nothing to match them against. */
export const storeNamespacesBody = z
  .object({
    prefix: z.array(z.string().max(1000)).max(100).optional(),
    suffix: z.array(z.string().max(1000)).max(100).optional(),
    max_depth: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: z.number().int().min(0).optional(),
  })
  .passthrough();

/** `POST /store/items/search`: LangGraph's namespace prefix, filter, query and page. */
export const storeSearchBody = z
  .object({
    namespace_prefix: z.array(z.string().max(1000)).max(100).optional(),
    filter: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: z.number().int().min(0).optional(),
    query: z.string().max(10_000).optional(),
  })
  .passthrough();

/**
 * LangGraph's long-term store, which Studio lists beside the threads. Graphs here keep what they
 * remember in their checkpoints, where the gate and the masking see it; a second place they could
 * write to would be outside both, so the store is served and always empty.
 */
export function storeRoutes(): Hono {
  const app = new Hono();
  app.post("/namespaces", async (c) => {
    await parseBody(c, storeNamespacesBody, true);
    return c.json({ namespaces: [] });
  });
  app.post("/items/search", async (c) => {
    await parseBody(c, storeSearchBody, true);
    return c.json({ items: [] });
  });
  return app;
}
