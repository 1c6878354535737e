import { Hono } from "hono";
import { ERROR_STATUS, type ErrorCode } from "../../protocol/index.js";
import { componentSchemas, EVENT_COMPONENTS, type JsonSchema, ref } from "./openapi-components.js";
import { ENDPOINTS } from "./openapi-paths.js";
import type { Endpoint, OpenApiExtension } from "../../http/index.js";
import { webhooks } from "./openapi-webhooks.js";

/** The OpenAPI document's own shape, as far as tollgate builds it. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, JsonSchema>>;
  /** What tollgate sends rather than serves (OpenAPI 3.1): the approval webhook. */
  webhooks: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
  security: Array<Record<string, string[]>>;
  [extension: `x-${string}`]: unknown;
}

/** The wire contract's version: changes when a client would notice, not with every release. */
export const CONTRACT_VERSION = "0.1.0";

/** Codes that any endpoint behind the `Host`/`Origin` checks and the token check may answer. */
const EDGE: ErrorCode[] = ["invalid_host", "forbidden_origin"];
const AUTH: ErrorCode[] = ["unauthorized"];

/**
 * Builds the OpenAPI 3.1 document of the wire contract from the zod schemas the server validates
 * with (bodies, parameters) and the protocol's schemas (responses, the seven event payloads), so
 * the document cannot say something the code does not do. Pure: same code, same document.
 */
export function buildOpenApiDocument(extra: OpenApiExtension = { endpoints: [], requests: {} }): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const e of [...ENDPOINTS, ...extra.endpoints]) (paths[e.path] ??= {})[e.method] = operation(e);
  return {
    openapi: "3.1.0",
    info: {
      title: "tollgate",
      version: CONTRACT_VERSION,
      description:
        "An agent server where every irreversible tool call waits for a person's approval. The event stream is " +
        "described in docs/reference/events.md, the approval semantics and error precedence in docs/concepts/state-machine.md.",
    },
    paths,
    webhooks: webhooks(),
    components: {
      schemas: componentSchemas(extra.requests),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "A token from AUTH_TOKENS or a JWT verified against AUTH_JWKS_URL. Without either configured, auth is off and every request is `anonymous`.",
        },
        ...(extra.endpoints.some((e) => e.langgraph)
          ? { apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "Under /langgraph only: the same token, as LangGraph's SDK sends it." } }
          : {}),
      },
    },
    security: [{ bearer: [] }],
    // OpenAPI 3.1 has no way to type the events of a text/event-stream body: the `data` schema of
    // each `event:` type is named here.
    "x-sse-events": Object.fromEntries(Object.entries(EVENT_COMPONENTS).map(([type, name]) => [type, ref(name)])),
  };
}

function operation(e: Endpoint): JsonSchema {
  const codes = [...(e.edge === false ? [] : EDGE), ...(e.auth === false ? [] : AUTH), ...e.errors];
  const op: JsonSchema = {
    operationId: e.operationId,
    summary: e.summary,
    ...(e.description ? { description: e.description } : {}),
    ...(e.auth === false ? { security: [] } : e.langgraph ? { security: [{ bearer: [] }, { apiKey: [] }] } : {}),
    ...(e.parameters ? { parameters: e.parameters } : {}),
    ...(e.body
      ? {
          requestBody: {
            required: e.body.required,
            description: e.body.description,
            content: { "application/json": { schema: ref(e.body.component) } },
          },
        }
      : {}),
    responses: { ...stringKeys(e.ok), ...errorResponses(codes) },
  };
  if (!e.langgraph && Object.values(e.ok).some((r) => "text/event-stream" in ((r.content as object | undefined) ?? {}))) {
    op["x-sse-events"] = Object.keys(EVENT_COMPONENTS);
  }
  return op;
}

/** One response per status, naming every code that status carries here (409 has several). */
function errorResponses(codes: ErrorCode[]): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Record<string, JsonSchema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: list.map((c) => `\`${c}\``).join(", "),
      ...(status === 429 || status === 503 ? { headers: { "Retry-After": { description: "Seconds until a retry may succeed.", schema: { type: "integer" } } } } : {}),
      ...(status === 401 ? { headers: { "WWW-Authenticate": { schema: { type: "string" } } } } : {}),
      content: { "application/json": { schema: ref("Error") } },
      "x-error-codes": list,
    };
  }
  return out;
}

const stringKeys = (r: Record<number, JsonSchema>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [String(k), v]));

/** `GET /openapi.json`: no token, like the page; built once per app. */
export function openApiRoutes(extra?: OpenApiExtension): Hono {
  let doc: string | undefined;
  const app = new Hono();
  app.get("/openapi.json", (c) => {
    doc ??= JSON.stringify(buildOpenApiDocument(extra));
    return c.body(doc, 200, { "content-type": "application/json; charset=utf-8" });
  });
  return app;
}
