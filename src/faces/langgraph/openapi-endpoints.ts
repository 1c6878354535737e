import type { ErrorCode } from "../../protocol/index.js";
import type { Endpoint, OpenApiExtension } from "../../http/index.js";
import { assistantSearchBody } from "./runs/assistants-routes.js";
import { commandBody } from "./protocol/commands.js";
import { streamBody } from "./protocol/protocol-routes.js";
import { runCreateBody } from "./runs/run-request.js";
import { storeNamespacesBody, storeSearchBody } from "./store/store-routes.js";
import { historyBody, stateAtBody, stateWriteBody, threadCreateBody, threadSearchBody } from "./runs/threads-routes.js";

const P = "/langgraph";
const param = (name: string, description: string) => ({ name, in: "path", required: true, description, schema: { type: "string" } });
const thread = param("thread_id", "The thread.");
const run = param("run_id", "A run of the thread.");
const checkpoint = param("checkpoint_id", "A checkpoint of the thread.");
const assistant = param("assistant_id", "An assistant id (uuid5 of the graph id) or the graph id itself.");
const json = (description: string, schema: Record<string, unknown> = { type: "object" }) => ({ description, content: { "application/json": { schema } } });
const list = (description: string) => json(description, { type: "array", items: { type: "object" } });
const stream = (description: string) => ({
  description: `${description} LangGraph's stream modes as event names (see docs/reference/langgraph-api.md); \`metadata\` first.`,
  headers: { "Content-Location": { description: "`/threads/{thread_id}/runs/{run_id}`: the run these frames come from.", schema: { type: "string" } } },
  content: { "text/event-stream": { schema: { type: "string" } } },
});

/** A run's refusals before it starts: the same as tollgate's own routes, plus LangGraph's. */
const RUN_ERRORS: ErrorCode[] = [
  "invalid_request",
  "unsupported_media_type",
  "not_found",
  "thread_not_found",
  "forbidden",
  "rate_limited",
  "overloaded",
  "shutting_down",
  "thread_busy",
  "awaiting_approval",
  "not_waiting",
  "stale_interrupt",
  "call_changed",
  "graph_mismatch",
  "approval_expired",
  "unknown_call",
  "unsupported",
  "storage_unavailable",
];
const READ: ErrorCode[] = ["invalid_request", "thread_not_found", "storage_unavailable"];
const runBody = { component: "LangGraphRunCreate", required: true, description: "`input` with one user message, or `command.resume`; `stream_mode`, `on_disconnect`." };

const DECLARED: Endpoint[] = [
  { method: "get", path: `${P}/info`, operationId: "lgInfo", summary: "Server version and flags (LangGraph's API)", auth: false, ok: { 200: json("Version and flags.") }, errors: [] },
  { method: "get", path: `${P}/ok`, operationId: "lgOk", summary: "Liveness (LangGraph's API)", auth: false, ok: { 200: json("`{ok: true}`.") }, errors: [] },
  {
    method: "post",
    path: `${P}/assistants/search`,
    operationId: "lgSearchAssistants",
    summary: "One assistant per served graph",
    body: { component: "LangGraphAssistantSearch", required: false, description: "Filters: `graph_id`, `name`, `metadata`; `limit`, `offset`." },
    ok: { 200: list("Assistants.") },
    errors: ["invalid_request", "unsupported_media_type"],
  },
  { method: "get", path: `${P}/assistants/{assistant_id}`, operationId: "lgGetAssistant", summary: "An assistant", parameters: [assistant], ok: { 200: json("The assistant.") }, errors: ["not_found"] },
  {
    method: "get",
    path: `${P}/assistants/{assistant_id}/graph`,
    operationId: "lgGetAssistantGraph",
    summary: "The graph, drawable (`?xray=true` for subgraphs)",
    parameters: [assistant],
    ok: { 200: json("Nodes and edges.") },
    errors: ["not_found"],
  },
  { method: "get", path: `${P}/assistants/{assistant_id}/schemas`, operationId: "lgGetAssistantSchemas", summary: "The graph's input, output and state schemas", parameters: [assistant], ok: { 200: json("Schemas.") }, errors: ["not_found"] },
  { method: "get", path: `${P}/assistants/{assistant_id}/subgraphs`, operationId: "lgGetAssistantSubgraphs", summary: "The graph's subgraphs", parameters: [assistant], ok: { 200: json("Subgraphs by namespace.") }, errors: ["not_found"] },
  {
    method: "post",
    path: `${P}/threads`,
    operationId: "lgCreateThread",
    summary: "Create a thread",
    body: { component: "LangGraphThreadCreate", required: false, description: "`thread_id`, `metadata` (`graph_id` or `assistant_id` picks the graph), `if_exists`." },
    ok: { 200: json("The thread.") },
    errors: ["invalid_request", "unsupported_media_type", "not_found", "thread_not_found", "forbidden", "thread_exists", "storage_unavailable"],
  },
  {
    method: "post",
    path: `${P}/threads/search`,
    operationId: "lgSearchThreads",
    summary: "The caller's threads, by metadata and status",
    body: { component: "LangGraphThreadSearch", required: false, description: "`metadata` (containment), `status`, `ids`, `limit`, `offset`." },
    ok: { 200: list("Threads, each with its values; masked.") },
    errors: ["invalid_request", "unsupported_media_type", "storage_unavailable"],
  },
  { method: "get", path: `${P}/threads/{thread_id}`, operationId: "lgGetThread", summary: "A thread with its values and interrupts", parameters: [thread], ok: { 200: json("The thread; masked.") }, errors: READ },
  { method: "delete", path: `${P}/threads/{thread_id}`, operationId: "lgDeleteThread", summary: "Refused: a thread's audit trail is kept", parameters: [thread], ok: {}, errors: [...READ, "unsupported"] },
  { method: "get", path: `${P}/threads/{thread_id}/state`, operationId: "lgGetState", summary: "The thread's head state", parameters: [thread], ok: { 200: json("values, next, tasks (with interrupts), checkpoint; masked.") }, errors: READ },
  {
    method: "get",
    path: `${P}/threads/{thread_id}/state/{checkpoint_id}`,
    operationId: "lgGetStateAt",
    summary: "The thread's state at one of its checkpoints",
    parameters: [thread, checkpoint],
    ok: { 200: json("As `GET …/state`, at that checkpoint; masked.") },
    errors: [...READ, "not_found"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/state/checkpoint`,
    operationId: "lgGetStateAtPost",
    summary: "As `GET …/state/{checkpoint_id}`, the checkpoint named in the body",
    parameters: [thread],
    body: { component: "LangGraphStateAt", required: true, description: "`checkpoint: {checkpoint_id, checkpoint_ns?}`, `subgraphs`." },
    ok: { 200: json("As `GET …/state`, at that checkpoint; masked.") },
    errors: [...READ, "not_found", "unsupported_media_type"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/state`,
    operationId: "lgUpdateState",
    summary: "Only a copy of a checkpoint (`as_node: \"__copy__\"`, Studio's \"re-run from here\"), under the fork rule; any other write is refused",
    parameters: [thread],
    body: { component: "LangGraphStateUpdate", required: false, description: "`as_node: \"__copy__\"` with `checkpoint_id` (or `checkpoint`), no `values`." },
    ok: { 200: json("`{checkpoint: {thread_id, checkpoint_ns, checkpoint_id}}`: the copy, now the thread's newest checkpoint.") },
    errors: [...READ, "not_found", "forbidden", "thread_busy", "awaiting_approval", "unsupported", "state_locked", "unsupported_media_type"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/copy`,
    operationId: "lgCopyThread",
    summary: "Copy an idle thread: its checkpoints, audit trail and ledger (what ran on it never runs on the copy)",
    parameters: [thread],
    ok: { 200: json("The new thread, the caller's.") },
    errors: [...READ, "forbidden", "thread_busy", "awaiting_approval"],
  },
  {
    method: "post",
    path: `${P}/store/namespaces`,
    operationId: "lgStoreNamespaces",
    summary: "The long-term store's namespaces: always none",
    body: { component: "LangGraphStoreNamespaces", required: false, description: "`prefix`, `suffix`, `max_depth`, `limit`, `offset`." },
    ok: { 200: json("`{namespaces: []}`.") },
    errors: ["invalid_request", "unsupported_media_type"],
  },
  {
    method: "post",
    path: `${P}/store/items/search`,
    operationId: "lgStoreSearch",
    summary: "The long-term store's items: always none",
    body: { component: "LangGraphStoreSearch", required: false, description: "`namespace_prefix`, `filter`, `query`, `limit`, `offset`." },
    ok: { 200: json("`{items: []}`.") },
    errors: ["invalid_request", "unsupported_media_type"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/history`,
    operationId: "lgHistory",
    summary: "The thread's head, as a one-entry history",
    parameters: [thread],
    body: { component: "LangGraphHistory", required: false, description: "`limit`." },
    ok: { 200: list("States, newest first.") },
    errors: [...READ, "unsupported_media_type"],
  },
  { method: "get", path: `${P}/threads/{thread_id}/history`, operationId: "lgHistoryGet", summary: "As `POST …/history`", parameters: [thread], ok: { 200: list("States, newest first.") }, errors: READ },
  { method: "post", path: `${P}/threads/{thread_id}/runs/stream`, operationId: "lgStreamRun", summary: "Start a run (a message or a resume) and stream it", parameters: [thread], body: runBody, ok: { 200: stream("The run's frames until its end.") }, errors: RUN_ERRORS },
  { method: "post", path: `${P}/threads/{thread_id}/runs`, operationId: "lgCreateRun", summary: "Start a run in the background", parameters: [thread], body: runBody, ok: { 200: json("The run.") }, errors: RUN_ERRORS },
  { method: "post", path: `${P}/threads/{thread_id}/runs/wait`, operationId: "lgWaitRun", summary: "Start a run and wait for its end", parameters: [thread], body: runBody, ok: { 200: json("Values; `__interrupt__` at an interrupt; `__error__` after an error.") }, errors: RUN_ERRORS },
  { method: "get", path: `${P}/threads/{thread_id}/runs`, operationId: "lgListRuns", summary: "The thread's runs, newest first", parameters: [thread], ok: { 200: list("Runs.") }, errors: READ },
  { method: "get", path: `${P}/threads/{thread_id}/runs/{run_id}`, operationId: "lgGetRun", summary: "A run", parameters: [thread, run], ok: { 200: json("The run.") }, errors: [...READ, "not_found"] },
  { method: "get", path: `${P}/threads/{thread_id}/runs/{run_id}/join`, operationId: "lgJoinRun", summary: "Wait for a run's end", parameters: [thread, run], ok: { 200: json("As `runs/wait`.") }, errors: [...READ, "not_found"] },
  {
    method: "get",
    path: `${P}/threads/{thread_id}/runs/{run_id}/stream`,
    operationId: "lgJoinStream",
    summary: "Rejoin a run's stream after `Last-Event-ID`",
    parameters: [thread, run],
    ok: { 200: stream("The frames after `Last-Event-ID`, live until the run's end.") },
    errors: [...READ, "not_found"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/runs/{run_id}/cancel`,
    operationId: "lgCancelRun",
    summary: "Stop the run in flight (`?wait=1` waits for its end)",
    parameters: [thread, run],
    ok: { 202: { description: "Cancelled; not waited for." }, 204: { description: "Cancelled, and ended." } },
    errors: [...READ, "not_found", "forbidden"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/commands`,
    operationId: "lgProtocolCommand",
    summary: "One command of LangGraph's thread-centric protocol (run.start, input.respond, state.get, …)",
    parameters: [thread],
    body: { component: "LangGraphProtocolCommand", required: true, description: "`{id, method, params}`." },
    ok: { 200: json("`{type: \"success\", id, result, meta}` or `{type: \"error\", id, error, message, tollgate: {code}}`: a refusal by the gate is an answer, not an HTTP error.") },
    errors: ["invalid_request", "unsupported_media_type", "thread_not_found", "rate_limited", "overloaded", "shutting_down", "storage_unavailable"],
  },
  {
    method: "post",
    path: `${P}/threads/{thread_id}/stream/events`,
    operationId: "lgProtocolEvents",
    summary: "The thread's events (thread-centric protocol), across its runs, filtered by channel",
    parameters: [thread],
    body: { component: "LangGraphProtocolStream", required: true, description: "`channels`; `since` (a seq) to replay after it, else the latest run from its start." },
    ok: { 200: { description: "Protocol events, `id:` their `event_id`, `event:` their method; open until the client leaves.", content: { "text/event-stream": { schema: { type: "string" } } } } },
    errors: ["invalid_request", "unsupported_media_type", "thread_not_found"],
  },
  {
    method: "get",
    path: `${P}/threads/{thread_id}/stream/events`,
    operationId: "lgProtocolSocket",
    summary: "The thread-centric protocol over a WebSocket: commands and events on one socket",
    parameters: [thread],
    ok: { 200: { description: "Upgraded (101) when asked with `Upgrade: websocket`; a refusal is accepted, then closed 4401, 4403 or 4404." } },
    errors: ["invalid_request", "thread_not_found"],
  },
];
const ENDPOINTS: Endpoint[] = DECLARED.map((e) => ({ ...e, langgraph: true }));

/** LangGraph's API in tollgate's OpenAPI document: its endpoints and the request bodies they parse. */
export const LANGGRAPH_OPENAPI: OpenApiExtension = {
  endpoints: ENDPOINTS,
  requests: {
    LangGraphRunCreate: runCreateBody,
    LangGraphThreadCreate: threadCreateBody,
    LangGraphThreadSearch: threadSearchBody,
    LangGraphAssistantSearch: assistantSearchBody,
    LangGraphHistory: historyBody,
    LangGraphStateAt: stateAtBody,
    LangGraphStateUpdate: stateWriteBody,
    LangGraphStoreNamespaces: storeNamespacesBody,
    LangGraphStoreSearch: storeSearchBody,
    LangGraphProtocolCommand: commandBody,
    LangGraphProtocolStream: streamBody,
  },
};
