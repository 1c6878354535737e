import { Hono } from "hono";
import { z } from "zod";
import type { ServedGraph } from "../../../graph/index.js";
import { type AppDeps, parseBody } from "../../../http/index.js";
import { assistantIdOf, graphOfAssistant } from "./assistant-id.js";

/** When the server started: a system assistant is as old as the process that serves it. */
const BOOTED_AT = new Date().toISOString();

export const assistantSearchBody = z
  .object({
    graph_id: z.string().optional(),
    name: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
  })
  .passthrough();

/** One assistant per graph served, as `langgraph dev` makes them. */
export function assistantOf(g: ServedGraph) {
  return {
    assistant_id: assistantIdOf(g.id),
    graph_id: g.id,
    config: {},
    context: {},
    metadata: { created_by: "system" },
    name: g.id,
    description: g.description,
    version: 1,
    created_at: BOOTED_AT,
    updated_at: BOOTED_AT,
  };
}

/** The messages channel every served graph has, as langgraph-api describes it. */
const MESSAGES_SCHEMA = {
  type: "object",
  properties: { messages: { langgraph_type: "messages" } },
  $schema: "http://json-schema.org/draft-07/schema#",
};

/** `POST /assistants/search`, `GET /assistants/{id}` and its graph, schemas and subgraphs. */
export function assistantsRoutes(deps: AppDeps): Hono {
  const app = new Hono();
  const catalog = () => deps.threads.catalog();

  app.post("/search", async (c) => {
    const q = await parseBody(c, assistantSearchBody, true);
    const found = catalog()
      .all()
      .map(assistantOf)
      .filter((a) => (q.graph_id === undefined || a.graph_id === q.graph_id) && (q.name === undefined || a.name.toLowerCase().includes(q.name.toLowerCase())))
      .filter((a) => Object.entries(q.metadata ?? {}).every(([k, v]) => (a.metadata as Record<string, unknown>)[k] === v));
    c.header("X-Pagination-Total", String(found.length));
    return c.json(found.slice(q.offset, q.offset + q.limit));
  });

  app.get("/:assistant_id", (c) => c.json(assistantOf(graphOfAssistant(catalog(), c.req.param("assistant_id")))));

  app.get("/:assistant_id/graph", async (c) => {
    const g = graphOfAssistant(catalog(), c.req.param("assistant_id"));
    const xray = ["true", "1", "yes"].includes(c.req.query("xray") ?? "");
    const drawable = await (g.graph as unknown as { getGraphAsync(o: { xray: boolean }): Promise<{ toJSON(): unknown }> }).getGraphAsync({ xray });
    return c.json(drawable.toJSON());
  });

  app.get("/:assistant_id/schemas", (c) => {
    const g = graphOfAssistant(catalog(), c.req.param("assistant_id"));
    const config = { type: "object", properties: {}, $schema: "http://json-schema.org/draft-07/schema#" };
    return c.json({ graph_id: g.id, input_schema: MESSAGES_SCHEMA, output_schema: MESSAGES_SCHEMA, state_schema: MESSAGES_SCHEMA, config_schema: config, context_schema: config });
  });

  app.get("/:assistant_id/subgraphs", (c) => {
    graphOfAssistant(catalog(), c.req.param("assistant_id"));
    return c.json({});
  });

  return app;
}
