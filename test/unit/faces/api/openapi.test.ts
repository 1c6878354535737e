import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { OPENAPI_FILE, openApiText } from "../../../../scripts/openapi.js";
import { approvalWebhookBody, signWebhook } from "../../../../src/ops/index.js";
import { APPROVAL_WEBHOOK_TYPES, ERROR_STATUS, EVENT_TYPES, type PendingCall } from "../../../../src/protocol/index.js";
import { LANGGRAPH_OPENAPI } from "../../../../src/faces/langgraph/index.js";
import { buildOpenApiDocument } from "../../../../src/faces/api/openapi.js";
import { resumeBody, runBody } from "../../../../src/faces/api/schemas.js";
import { allRefs, resolvePointer, schemaChecker } from "../../../helpers/openapi-validator.js";

const doc = buildOpenApiDocument(LANGGRAPH_OPENAPI) as any;
const checker = (name: string) => schemaChecker(doc, { $ref: `#/components/schemas/${name}` });

/** The contract's endpoints (its *Endpoints* section), and the error codes it names for each. */
const CONTRACT: Array<[string, string, string[]]> = [
  ["post", "/threads", ["thread_exists"]],
  ["get", "/threads", []],
  ["get", "/threads/{thread_id}", ["thread_not_found"]],
  ["post", "/threads/{thread_id}/runs", ["thread_busy", "awaiting_approval", "invalid_request"]],
  [
    "post",
    "/threads/{thread_id}/resume",
    ["thread_not_found", "not_waiting", "stale_interrupt", "thread_busy", "approval_expired", "unknown_call", "invalid_request"],
  ],
  ["post", "/threads/{thread_id}/cancel", []],
  ["get", "/threads/{thread_id}/stream", ["thread_not_found"]],
  ["get", "/threads/{thread_id}/audit", []],
  ["get", "/approvals", []],
  ["get", "/metrics", []],
  ["get", "/openapi.json", []],
  ["get", "/healthz", []],
  ["get", "/me", []],
  ["get", "/", []],
];

describe("the OpenAPI document", () => {
  it("is checked in as docs/reference/openapi.json exactly as the code generates it (run `npm run openapi`)", () => {
    expect(fs.readFileSync(OPENAPI_FILE, "utf8")).toBe(openApiText());
  });

  it("is OpenAPI 3.1 with every endpoint of the contract and the error codes the contract names", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    for (const [method, path, codes] of CONTRACT) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.operationId).toEqual(expect.any(String));
      for (const code of codes) {
        const status = String(ERROR_STATUS[code as keyof typeof ERROR_STATUS]);
        expect(op.responses[status]?.["x-error-codes"], `${method} ${path} ${code}`).toContain(code);
      }
    }
    const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("resolves every $ref, and every component is a schema a JSON Schema reader can compile", () => {
    const refs = allRefs(doc);
    expect(refs.length).toBeGreaterThan(20);
    for (const { at, ref } of refs) expect(resolvePointer(doc, ref), `${ref} at ${at}`).toBeDefined();
    for (const name of Object.keys(doc.components.schemas)) expect(() => checker(name), name).not.toThrow();
  });

  it("asks for the bearer token everywhere but on the page, /healthz, itself and LangGraph's /info and /ok", () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    const open = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.entries(item).filter(([, op]: [string, any]) => op.security?.length === 0).map(([m]) => `${m} ${path}`),
    );
    expect(open.sort()).toEqual(["get /", "get /assets/{name}", "get /healthz", "get /langgraph/info", "get /langgraph/ok", "get /openapi.json"]);
    // Under /langgraph the token may also come as x-api-key, as LangGraph's SDK sends it.
    const lgRun = doc.paths["/langgraph/threads/{thread_id}/runs/stream"].post;
    expect(lgRun.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
    for (const [path, item] of Object.entries(doc.paths) as Array<[string, any]>) {
      for (const [method, op] of Object.entries(item) as Array<[string, any]>) {
        const needsToken = op.security?.length !== 0;
        expect(Boolean(op.responses["401"]), `${method} ${path}`).toBe(needsToken);
      }
    }
  });

  it("types the seven events, and every streaming answer is text/event-stream", () => {
    expect(Object.keys(doc["x-sse-events"]).sort()).toEqual([...EVENT_TYPES].sort());
    for (const path of ["/threads/{thread_id}/runs", "/threads/{thread_id}/resume", "/threads/{thread_id}/stream"]) {
      const op = Object.values(doc.paths[path])[0] as any;
      expect(op.responses["200"].content["text/event-stream"], path).toBeDefined();
      expect(op["x-sse-events"]).toEqual([...EVENT_TYPES]);
    }
    // The `data` of a frame carries no `type` (that is the `event:` line) and always `run_id`.
    const done = checker("DoneEvent");
    expect(done({ run_id: "r", outcome: "completed", message: "" })).toBeNull();
    expect(done({ run_id: "r", outcome: "finished", message: "" })).not.toBeNull();
    expect(done({ outcome: "completed", message: "" })).not.toBeNull();
  });

  it("describes request bodies as the server reads them: what it accepts passes, what it refuses on shape fails", () => {
    const bodies: Array<[string, typeof runBody | typeof resumeBody, unknown]> = [
      ["RunRequest", runBody, { message: "hi" }],
      ["RunRequest", runBody, { message: "hi", on_disconnect: "continue", extra: 1 }],
      ["RunRequest", runBody, {}],
      ["RunRequest", runBody, { message: "hi", on_disconnect: "later" }],
      ["ResumeRequest", resumeBody, { interrupt_id: "i", decisions: [{ call_id: "c", approved: true, edited_args: { a: 1 } }] }],
      ["ResumeRequest", resumeBody, { interrupt_id: "", decisions: [] }],
      ["ResumeRequest", resumeBody, { interrupt_id: "i", decisions: [{ call_id: "c" }] }],
    ];
    for (const [name, schema, body] of bodies) {
      expect(checker(name)(body) === null, `${name} ${JSON.stringify(body)}`).toBe(schema.safeParse(body).success);
    }
    expect(checker("CreateThreadRequest")({ thread_id: "no spaces allowed" })).not.toBeNull();
  });

  it("publishes the approval webhook under `webhooks`: the body tollgate builds fits it, its two headers, what counts as delivered", () => {
    const op = doc.webhooks?.approval?.post;
    expect(op, "webhooks.approval.post").toBeDefined();
    // The receiver is not tollgate: it gets no bearer token, the signature authenticates the request.
    expect(op.security).toEqual([]);
    const refs = allRefs(doc.webhooks);
    expect(refs.map((r) => r.ref)).toContain("#/components/schemas/ApprovalWebhook");
    for (const { at, ref } of refs) expect(resolvePointer(doc, ref), `${ref} at webhooks${at.slice(1)}`).toBeDefined();

    const headers = Object.fromEntries(op.parameters.filter((p: any) => p.in === "header").map((p: any) => [p.name, p]));
    expect(Object.keys(headers).sort()).toEqual(["X-Tollgate-Delivery", "X-Tollgate-Signature"]);
    for (const h of Object.values(headers) as any[]) expect(h.required, h.name).toBe(true);

    const call: PendingCall = { call_id: "c1", name: "send_email", args: { to: "***" }, policy: "owner", editable: true, args_schema: { type: "object" } };
    const requested = {
      type: "approval.requested" as const,
      thread_id: "t1",
      interrupt_id: "i1",
      calls: [call],
      expires_at: "2026-01-01T00:15:00.000Z",
      requested_by: "alice",
      at: "2026-01-01T00:00:00.000Z",
    };
    const raw = approvalWebhookBody(requested);
    const sig = schemaChecker(doc, headers["X-Tollgate-Signature"].schema);
    expect(sig(signWebhook(raw, "whsec-0123456789abcdef"))).toBeNull();
    expect(sig("sha1=abc")).not.toBeNull();

    const body = schemaChecker(doc, op.requestBody.content["application/json"].schema);
    for (const type of APPROVAL_WEBHOOK_TYPES) expect(body(JSON.parse(approvalWebhookBody({ ...requested, type }))), type).toBeNull();
    const decided = approvalWebhookBody({ ...requested, type: "approval.decided", decided_by: "ops", decisions: [{ call_id: "c1", decision: "approved" }] });
    expect(body(JSON.parse(decided))).toBeNull();
    expect(body({ ...requested, type: "approval.opened" })).not.toBeNull();
    expect(body({ ...requested, decisions: [{ call_id: "c1", decision: "maybe" }] })).not.toBeNull();
    const { requested_by: _r, ...withoutRequester } = requested;
    expect(body(withoutRequester)).not.toBeNull();

    expect(Object.keys(op.responses).sort()).toEqual(["2XX", "default"]);
  });
});
