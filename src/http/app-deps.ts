import type { Hono } from "hono";
import type { Access, Authenticator } from "../auth/index.js";
import type { OpenApiExtension } from "./openapi-types.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../ops/index.js";
import type { RunService, ThreadService } from "../runs/index.js";

/** What the HTTP layer needs; tests build it over a temp database. */
export interface AppDeps {
  runs: RunService;
  threads: ThreadService;
  /** Who is calling: `anonymous` with auth off. */
  auth: Authenticator;
  access: Access;
  /** Which `Host` names and cross-site origins are answered. */
  edge: { allowedHosts: readonly string[]; corsOrigins: readonly string[] };
  log: Logger;
  /** What `GET /metrics` renders. */
  metrics: Metrics;
  /** Takes secrets out of a message before it is sent (an upstream error may echo a key). */
  scrub(text: string): string;
  /** Whether the database answers a read, for `/healthz`. */
  databaseReadable(): Promise<boolean>;
  /** Comment frames on idle streams keep proxies from closing them (`HEARTBEAT_SECONDS`). */
  heartbeatMs: number;
  /** LangGraph's API, mounted at `/langgraph`: `meta` (`/info`, `/ok`) before authentication, `api` after. */
  langgraph?: { meta: Hono; api: Hono; openapi: OpenApiExtension };
  /** Channels' endpoints under `/integrations` (Slack's interactivity): their own auth is a signature, so no bearer token and no JSON-only rule. */
  integrations?: Hono;
  /** Emailed links' pages under `/decide`: the token in the path is the credential, and their form posts carry `Origin: null`, so before the origin guard too. */
  decide?: Hono;
  /** The built web page served at `/`; default `dist/web` of this checkout. */
  webDir?: string;
}
