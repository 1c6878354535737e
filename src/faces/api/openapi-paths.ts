import type { ErrorCode } from "../../protocol/index.js";
import { type Endpoint, type JsonSchema, threadIdSchema } from "../../http/index.js";
import { parameterSchema, ref } from "./openapi-components.js";
import { listThreadsQuery } from "./schemas.js";

export type { Endpoint } from "../../http/index.js";

const threadId: JsonSchema = {
  name: "thread_id",
  in: "path",
  required: true,
  description: "Client-chosen or server-made thread id.",
  schema: parameterSchema(threadIdSchema),
};

const json = (description: string, component: string): JsonSchema => ({
  description,
  content: { "application/json": { schema: ref(component) } },
});

const stream = (description: string): JsonSchema => ({
  description: `${description} See docs/reference/events.md; the \`data\` of each event type is the schema named in \`x-sse-events\`.`,
  headers: { "X-Run-Id": { description: "The run whose events follow.", schema: { type: "string" } } },
  content: { "text/event-stream": { schema: { type: "string", description: "SSE frames: `id: <run_id>:<seq>`, `event: <type>`, `data: <JSON>`." } } },
});

/** Every way a run or resume can be refused before its stream starts, besides validation. */
const ADMISSION: ErrorCode[] = ["rate_limited", "overloaded", "shutting_down"];

export const ENDPOINTS: Endpoint[] = [
  {
    method: "post",
    path: "/threads",
    operationId: "createThread",
    summary: "Create a thread",
    body: { component: "CreateThreadRequest", required: false, description: "Optional. `metadata` is at most 8 KiB and 32 levels deep." },
    ok: { 201: json("The new, idle thread.", "CreatedThread") },
    errors: ["invalid_request", "unsupported_media_type", "thread_not_found", "forbidden", "thread_exists", "storage_unavailable"],
  },
  {
    method: "get",
    path: "/threads",
    operationId: "listThreads",
    summary: "The caller's threads, most recently active first",
    parameters: [
      { name: "limit", in: "query", required: false, schema: parameterSchema(listThreadsQuery.shape.limit) },
      {
        name: "cursor",
        in: "query",
        required: false,
        description: "`next_cursor` of the previous page.",
        schema: parameterSchema(listThreadsQuery.shape.cursor),
      },
    ],
    ok: { 200: json("One page of threads; `next_cursor` is null on the last.", "ThreadList") },
    errors: ["invalid_request", "storage_unavailable"],
  },
  {
    method: "get",
    path: "/threads/{thread_id}",
    operationId: "getThread",
    summary: "A thread's status, messages and open interrupt",
    parameters: [threadId],
    ok: { 200: json("The thread; sensitive arguments masked.", "ThreadView") },
    errors: ["invalid_request", "thread_not_found", "storage_unavailable"],
  },
  {
    method: "post",
    path: "/threads/{thread_id}/runs",
    operationId: "startRun",
    summary: "Send a message and stream the run",
    description: "Creates the thread if it does not exist. `message` must not be empty and is at most 32 KiB.",
    parameters: [threadId],
    body: { component: "RunRequest", required: true, description: "The user's message." },
    ok: { 200: stream("The run's events, until its terminal event.") },
    errors: ["invalid_request", "unsupported_media_type", "thread_not_found", "forbidden", ...ADMISSION, "thread_busy", "awaiting_approval", "graph_mismatch", "storage_unavailable"],
  },
  {
    method: "post",
    path: "/threads/{thread_id}/resume",
    operationId: "resume",
    summary: "Decide the open interrupt",
    description:
      "A pending call with no decision is rejected, except in an interrupt that holds a `quorum` call: there each decision is taken call by call, and while calls still wait the answer is `202` `{status: \"waiting_human\", waiting_on, run_id: null}` whatever `Accept` says. With `Accept: text/event-stream` the continuation streams; otherwise it runs on and `202` names its run.",
    parameters: [threadId],
    body: { component: "ResumeRequest", required: true, description: "One decision per pending call." },
    ok: {
      200: stream("With `Accept: text/event-stream`: the continuation's events."),
      202: json("Without `Accept: text/event-stream`: the continuation's run; follow it with `GET …/stream`. Or, while calls of a quorum interrupt still wait: the calls it waits on.", "ResumeAccepted"),
    },
    errors: [
      "invalid_request",
      "unsupported_media_type",
      "thread_not_found",
      "forbidden",
      ...ADMISSION,
      "not_waiting",
      "stale_interrupt",
      "already_decided",
      "call_changed",
      "thread_busy",
      "approval_expired",
      "unknown_call",
      "storage_unavailable",
    ],
  },
  {
    method: "post",
    path: "/threads/{thread_id}/cancel",
    operationId: "cancel",
    summary: "Stop the run in flight or close the open interrupt",
    description: "Idempotent. No body needed.",
    parameters: [threadId],
    ok: { 200: json("`cancelled` says whether there was anything to stop.", "CancelResult") },
    errors: ["invalid_request", "unsupported_media_type", "thread_not_found", "forbidden", "storage_unavailable"],
  },
  {
    method: "get",
    path: "/threads/{thread_id}/stream",
    operationId: "streamThread",
    summary: "Replay and follow the latest run's events",
    parameters: [
      threadId,
      { name: "Last-Event-ID", in: "header", required: false, description: "Replay after this event id.", schema: { type: "string" } },
      { name: "last_event_id", in: "query", required: false, description: "Same as the header, for clients that cannot set it.", schema: { type: "string" } },
    ],
    ok: {
      200: stream("The latest run's events after `Last-Event-ID` (all of them without one), then the live ones."),
      204: { description: "Nothing left to send: no run yet, or `Last-Event-ID` is the latest run's terminal event." },
    },
    errors: ["invalid_request", "thread_not_found", "storage_unavailable"],
  },
  {
    method: "get",
    path: "/threads/{thread_id}/audit",
    operationId: "getAudit",
    summary: "Every decision on the thread's pending calls, oldest first",
    parameters: [threadId],
    ok: { 200: json("Append-only; arguments only as keyed hashes.", "AuditTrail") },
    errors: ["invalid_request", "thread_not_found", "storage_unavailable"],
  },
  {
    method: "get",
    path: "/approvals",
    operationId: "listApprovals",
    summary: "Open interrupts the caller may decide, soonest deadline first",
    ok: { 200: json("The approvals inbox; arguments masked.", "ApprovalList") },
    errors: ["storage_unavailable"],
  },
  {
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    summary: "Prometheus metrics",
    description: "With auth on, needs the role `metrics` or `admin`.",
    ok: { 200: { description: "Prometheus text exposition format.", content: { "text/plain": { schema: { type: "string" } } } } },
    errors: ["forbidden"],
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    summary: "This document",
    auth: false,
    ok: { 200: { description: "OpenAPI 3.1.", content: { "application/json": { schema: { type: "object" } } } } },
    errors: [],
  },
  {
    method: "get",
    path: "/healthz",
    operationId: "health",
    summary: "Liveness and database reachability",
    description: "Never needs a token and skips the `Host` and `Origin` checks, so load balancers can probe it by IP.",
    auth: false,
    edge: false,
    ok: { 200: json("Up, and the database answers.", "Health"), 503: json("The database is unreachable.", "Health") },
    errors: [],
  },
  {
    method: "get",
    path: "/graphs",
    operationId: "listGraphs",
    summary: "The graphs this server serves",
    description: "A new thread runs the graph its first request names (`graph_id`), else `agent` if served, else the only one.",
    ok: { 200: json("The graphs, by id.", "GraphList") },
    errors: [],
  },
  {
    method: "get",
    path: "/me",
    operationId: "me",
    summary: "Who the caller is",
    description: "Without auth: `anonymous` with every role.",
    ok: { 200: json("The caller's principal.", "Me") },
    errors: [],
  },
  {
    method: "get",
    path: "/",
    operationId: "webPage",
    summary: "The web page",
    auth: false,
    ok: { 200: { description: "The page.", content: { "text/html": { schema: { type: "string" } } } }, 304: { description: "Not modified (`If-None-Match`)." } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/assets/{name}",
    operationId: "webAsset",
    summary: "The web page's static files",
    auth: false,
    parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
    ok: { 200: { description: "The file." }, 304: { description: "Not modified (`If-None-Match`)." } },
    errors: ["not_found"],
  },
];
