import type { z } from "zod";
import type { ErrorCode } from "../protocol/index.js";

/** A JSON Schema or OpenAPI object, as the document builder writes it. */
export type JsonSchema = Record<string, unknown>;

/** One endpoint of the contract, as the document builder turns it into an operation. */
export interface Endpoint {
  method: "get" | "post" | "delete";
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** False: no bearer token needed, even with auth on. */
  auth?: false;
  /** Behind the `Host` and `Origin` checks (all but `/healthz`). */
  edge?: false;
  parameters?: JsonSchema[];
  body?: { component: string; required: boolean; description: string };
  /** Successful answers by status. */
  ok: Record<number, JsonSchema>;
  /** Error codes this endpoint can answer, besides the edge's and authentication's. */
  errors: ErrorCode[];
  /** A stream of LangGraph's events, not the seven (no `x-sse-events`); a token may come as `x-api-key`. */
  langgraph?: true;
}

/** Endpoints a face serves beside tollgate's own (LangGraph's API), with the request bodies they name. */
export interface OpenApiExtension {
  endpoints: Endpoint[];
  requests: Record<string, z.ZodType>;
}
