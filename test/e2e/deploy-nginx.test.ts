/**
 * The proxy recipe (deploy/nginx/tollgate.conf) with Debian's real nginx in front of two replicas
 * on one PostgreSQL database, every request through it under a public Host name: a run streams
 * through it token by token, a cancel sent to the other replica stops it, a Last-Event-ID
 * reconnect misses nothing, an approval lands and the refund runs once, and a Host the replicas
 * were not told of is refused. Slow-ish (a PostgreSQL cluster, two replicas, nginx: ~10 s); skipped
 * without nginx or PostgreSQL, except under CI=true.
 */
import http from "node:http";
import { Readable } from "node:stream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse, type SseMessage } from "../../src/client/sse-reader.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { nginxAvailable, type RunningNginx, startNginx } from "../helpers/nginx.js";
import { assertPostgresAvailable, type PgCluster, skipPostgresSuite, startPostgres } from "../helpers/postgres.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { within } from "../helpers/within.js";
import { expectNoStackTraces, threadId } from "./support.js";

/** The public name the proxy serves; the replicas are told it with ALLOWED_HOSTS. */
const PUBLIC_HOST = "tollgate.example.com";

const nginx = nginxAvailable();
const skipNginx = !nginx.ok && process.env.CI !== "true";
if (skipNginx && !nginx.ok) console.log(`[deploy-nginx] skipped: ${nginx.why}`);
const skip = skipPostgresSuite("deploy-nginx") || skipNginx;

let cluster: PgCluster;
let model: FakeOpenAI;
let replicas: ServerProcess[] = [];
let proxy: RunningNginx;
let db: pg.Pool;

/** A request to the proxy under `host`, answered as status, headers and the body as a stream. */
function viaProxy(o: { method: string; path: string; body?: unknown; host?: string; headers?: Record<string, string> }): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const req = http.request(
      {
        host: "127.0.0.1",
        port: proxy.port,
        method: o.method,
        path: o.path,
        headers: { host: o.host ?? PUBLIC_HOST, ...(body ? { "content-type": "application/json" } : {}), ...o.headers },
      },
      resolve,
    );
    req.on("error", reject);
    req.end(body);
  });
}

const json = async (res: http.IncomingMessage) => JSON.parse(await text(res)) as any;
async function text(res: http.IncomingMessage): Promise<string> {
  let out = "";
  for await (const chunk of res) out += String(chunk);
  return out;
}
const frames = (res: http.IncomingMessage) => readSse(Readable.toWeb(res) as ReadableStream<Uint8Array>);
async function all(res: http.IncomingMessage): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const m of frames(res)) out.push(m);
  return out;
}

describe.skipIf(skip)("nginx in front of two replicas on PostgreSQL (deploy/)", () => {
  beforeAll(async () => {
    assertPostgresAvailable();
    if (!nginx.ok) throw new Error(`the proxy recipe's suite needs nginx (CI=true does not skip it): ${nginx.why}`);
    cluster = await startPostgres();
    const url = await cluster.createDatabase();
    model = await startFakeOpenAI();
    const env = { MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url, DATABASE_URL: url, ALLOWED_HOSTS: PUBLIC_HOST };
    replicas = await Promise.all([startServer(env), startServer(env)]);
    // Which replica answered, for the test only: the recipe itself says nothing of it.
    proxy = await startNginx({ upstreams: replicas.map((r) => new URL(r.url).host), extraHttp: "  add_header X-Test-Upstream $upstream_addr always;" });
    db = new pg.Pool({ connectionString: url, max: 2 });
  }, 90_000);
  afterAll(async () => {
    for (const r of replicas) expectNoStackTraces(r);
    await proxy?.stop();
    await Promise.all(replicas.map((r) => r.kill()));
    await db?.end();
    await model?.close();
    await cluster?.stop();
  });

  it("readiness through the proxy: /healthz answers 200 while the database answers", async () => {
    const res = await viaProxy({ method: "GET", path: "/healthz" });
    expect([res.statusCode, await json(res)]).toEqual([200, { ok: true }]);
  });

  it("streams token by token; a cancel sent to the other replica stops the run streaming through the proxy", async () => {
    const id = threadId("nginx-cancel");
    // The model sends one token, then holds the answer open: nothing more comes until the cancel.
    model.push({ hang: true, text: "partial" });
    const res = await viaProxy({ method: "POST", path: `/threads/${id}/runs`, body: { message: "hello" }, headers: { accept: "text/event-stream" } });
    expect(res.statusCode).toBe(200);
    const served = String(res.headers["x-test-upstream"]);
    const other = replicas.find((r) => new URL(r.url).host !== served)!;
    const events = frames(res)[Symbol.asyncIterator]();
    // The token arrives while the model's answer (and so the run's stream) is still open: not buffered.
    const first = await within(events.next(), { ms: 15_000, failure: "the first token did not come through the proxy while the run was open" });
    expect(first.value).toMatchObject({ event: "token" });
    expect(JSON.parse(first.value!.data)).toMatchObject({ text: "partial" });
    const cancel = await fetch(`${other.url}/threads/${id}/cancel`, { method: "POST" });
    expect(await cancel.json()).toMatchObject({ cancelled: true });
    const rest: SseMessage[] = [];
    await within(
      (async () => {
        for (let e = await events.next(); !e.done; e = await events.next()) rest.push(e.value);
      })(),
      { ms: 15_000, failure: "the stream through the proxy did not end after the cancel on the other replica" },
    );
    expect(rest.map((m) => m.event)).toEqual(["cancelled"]);
  });

  it("a Last-Event-ID reconnect through the proxy misses nothing", async () => {
    const id = threadId("nginx-replay");
    model.push({ text: "one two three four five six" });
    const res = await viaProxy({ method: "POST", path: `/threads/${id}/runs`, body: { message: "count" }, headers: { accept: "text/event-stream" } });
    const whole = await all(res);
    expect(whole.at(-1)?.event).toBe("done");
    const cut = 2;
    const again = await viaProxy({ method: "GET", path: `/threads/${id}/stream`, headers: { accept: "text/event-stream", "last-event-id": whole[cut - 1]!.id! } });
    expect(again.statusCode).toBe(200);
    const replayed = await all(again);
    expect(replayed.map((m) => [m.id, m.event, m.data])).toEqual(whole.slice(cut).map((m) => [m.id, m.event, m.data]));
  });

  it("an approval lands through the proxy: the refund waits, the resume runs it once", async () => {
    const id = threadId("nginx-approve");
    model.push({ toolCalls: [{ id: "ng-1", name: "refund_order", args: { order_id: "A-1002", amount_cents: 300, reason: "late" } }] });
    const asked = await all(await viaProxy({ method: "POST", path: `/threads/${id}/runs`, body: { message: "refund" }, headers: { accept: "text/event-stream" } }));
    expect(asked.at(-1)?.event).toBe("interrupt");
    const interrupt = JSON.parse(asked.at(-1)!.data) as { interrupt_id: string };
    model.push({ text: "Refunded." });
    const resumed = await all(
      await viaProxy({
        method: "POST",
        path: `/threads/${id}/resume`,
        body: { interrupt_id: interrupt.interrupt_id, decisions: [{ call_id: "ng-1", approved: true }] },
        headers: { accept: "text/event-stream" },
      }),
    );
    expect(resumed.map((m) => m.event)).toContain("tool_result");
    expect(resumed.at(-1)?.event).toBe("done");
    expect((await db.query("SELECT call_id FROM refunds WHERE call_id = $1", ["ng-1"])).rows).toHaveLength(1);
  });

  it("a Host the replicas were not told of (ALLOWED_HOSTS) is refused: 400 invalid_host", async () => {
    const res = await viaProxy({ method: "GET", path: "/threads", host: "elsewhere.example.net" });
    expect(res.statusCode).toBe(400);
    expect((await json(res)).error.code).toBe("invalid_host");
  });

  it("the access log writes an emailed link's path as /decide/[token], never the token", async () => {
    const token = "tok3n-in-the-path-Abcdefghijklmnopqrstuvwx";
    await viaProxy({ method: "GET", path: `/decide/${token}` });
    const logged = async () => {
      while (!proxy.accessLog().includes("/decide/")) await new Promise((res) => setTimeout(res, 10));
      return proxy.accessLog();
    };
    const log = await within(logged(), { ms: 5_000, failure: "nginx wrote no access log line for the request" });
    expect(log).toContain('"GET /decide/[token] HTTP/1.1"');
    expect(log).not.toContain(token);
  });
});
