import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectNoStackTraces, parseSse, type Stack, startStack, terminal, threadId } from "./support.js";

/** A raw HTTP/1.1 exchange on its own socket, so Host, Origin and broken bodies are exactly as written. */
function raw(base: string, request: string): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    // write, not end: a half-closed request loses its answer once the server has to wait for anything.
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let text = "";
    socket.setEncoding("utf8").on("data", (d: string) => (text += d));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), head, body });
    });
  });
}

function request(method: string, path: string, headers: Record<string, string>, body = ""): string {
  const lines = [`${method} ${path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "Connection: close"];
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

const codeOf = (r: { body: string }) => (JSON.parse(r.body) as { error: { code: string } }).error.code;

describe("browsers and the edge, auth off", () => {
  let s: Stack;
  let host: string;
  beforeAll(async () => {
    s = await startStack({ ALLOWED_HOSTS: "tollgate.internal" });
    host = new URL(s.server.url).host;
  });
  afterAll(async () => {
    expectNoStackTraces(s.server);
    await s?.stop();
  });

  it("a Host this server does not answer for is 400 invalid_host (DNS rebinding); /healthz is exempt", async () => {
    const body = JSON.stringify({ message: "hi" });
    const json = { "Content-Type": "application/json" };
    const rebound = await raw(s.server.url, request("POST", "/threads/rebind/runs", { Host: "attacker.example:8787", ...json }, body));
    expect([rebound.status, codeOf(rebound)]).toEqual([400, "invalid_host"]);
    expect((await raw(s.server.url, request("GET", "/threads/rebind", { Host: "attacker.example" }))).status).toBe(400);
    expect((await raw(s.server.url, request("GET", "/healthz", { Host: "10.0.0.7:8787" }))).status).toBe(200);
    // Allowed: the loopback names and ALLOWED_HOSTS, with any port.
    for (const h of ["localhost:1", "LOCALHOST", "127.0.0.1:9", "[::1]:8787", "tollgate.internal:443"]) {
      expect((await raw(s.server.url, request("GET", "/me", { Host: h }))).status, h).toBe(200);
    }
    expect(s.db.rows("threads", "thread_id = 'rebind'")).toEqual([]);
    // No Host, two Hosts, or one the HTTP adapter cannot parse: still the contract's JSON error.
    const none = await raw(s.server.url, "GET /me HTTP/1.0\r\n\r\n");
    expect([none.status, codeOf(none)]).toEqual([400, "invalid_host"]);
    const two = await raw(s.server.url, request("GET", "/me", { Host: host, host: "evil.example" }));
    expect([two.status, codeOf(two)]).toEqual([400, "invalid_host"]);
    const mangled = await raw(s.server.url, request("GET", "/me", { Host: "localhost:@evil.example" }));
    expect([mangled.status, codeOf(mangled)]).toEqual([400, "invalid_host"]);
    const badPath = await raw(s.server.url, request("GET", "/threads/a\\b", { Host: host }));
    expect([badPath.status, codeOf(badPath)]).toEqual([400, "invalid_request"]);
  });

  it("a cross-site Origin is 403 forbidden_origin, body-less POSTs included; the server's own origin passes", async () => {
    const id = threadId("origin");
    s.model.push({ toolCalls: [{ id: "o1", name: "send_email", args: { to: "ada@example.com", subject: "s", body: "b" } }] });
    const intr = terminal(await s.client.run(id, "email").collect(), "interrupt");
    const evil = { Host: host, Origin: "http://evil.example" };
    const approve = JSON.stringify({ interrupt_id: intr.interrupt_id, decisions: [{ call_id: "o1", approved: true }] });
    for (const [method, path, body] of [
      ["POST", `/threads/${id}/resume`, approve],
      ["POST", `/threads/${id}/cancel`, ""],
      ["POST", `/threads/${threadId("o")}/runs`, JSON.stringify({ message: "x" })],
      ["GET", `/threads/${id}`, ""],
    ] as const) {
      const r = await raw(s.server.url, request(method, path, { ...evil, "Content-Type": "application/json" }, body));
      expect([r.status, codeOf(r)], `${method} ${path}`).toEqual([403, "forbidden_origin"]);
    }
    expect((await s.client.getThread(id)).pending?.interrupt_id).toBe(intr.interrupt_id);
    expect(s.db.rows("outbox")).toEqual([]);
    // No CORS headers for anyone while CORS_ORIGINS is empty; the own origin is not cross-site.
    const own = await raw(s.server.url, request("GET", `/threads/${id}`, { Host: host, Origin: `http://${host}` }));
    expect(own.status).toBe(200);
    expect(own.head.toLowerCase()).not.toContain("access-control-allow-origin");
  });

  it("a POST body that is not JSON is 415, before the body is read; a body-less cancel needs no type", async () => {
    const id = threadId("ctype");
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16"]) {
      const r = await raw(s.server.url, request("POST", `/threads/${id}/runs`, { Host: host, "Content-Type": type }, '{"message":"hi"}'));
      expect([r.status, codeOf(r)], type).toEqual([415, "unsupported_media_type"]);
    }
    const untyped = await raw(s.server.url, request("POST", `/threads/${id}/runs`, { Host: host }, '{"message":"hi"}'));
    expect(untyped.status).toBe(415);
    expect(s.db.rows("threads", "thread_id = ?", id)).toEqual([]);
    await call(s.server.url, "POST", "/threads", { thread_id: id });
    expect((await raw(s.server.url, request("POST", `/threads/${id}/cancel`, { Host: host }))).status).toBe(200);
  });

  it("checks run in the contract's order: invalid_host, forbidden_origin, 415, 400", async () => {
    const bad = { Host: "attacker.example", Origin: "http://evil.example", "Content-Type": "text/plain" };
    expect(codeOf(await raw(s.server.url, request("POST", "/threads/x/runs", bad, "{")))).toBe("invalid_host");
    expect(codeOf(await raw(s.server.url, request("POST", "/threads/x/runs", { ...bad, Host: host }, "{")))).toBe("forbidden_origin");
    expect(codeOf(await raw(s.server.url, request("POST", "/threads/x/runs", { Host: host, "Content-Type": "text/plain" }, "{")))).toBe(
      "unsupported_media_type",
    );
    expect(codeOf(await raw(s.server.url, request("POST", "/threads/x/runs", { Host: host, "Content-Type": "application/json" }, "{")))).toBe(
      "invalid_request",
    );
  });

  it("metadata over 8 KiB or 32 levels, and any body nested too deep, is 400, never 500", async () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    const nested = (n: number) => JSON.parse(`{"a":${'{"a":'.repeat(n - 1)}1${"}".repeat(n)}`) as object; // n levels
    const cases: Array<[string, unknown]> = [
      ["big", { thread_id: threadId("m"), metadata: { blob: "x".repeat(8 * 1024) } }],
      ["deep", { thread_id: threadId("m"), metadata: nested(33) }],
      ["very deep", `{"metadata":${deep(100_000)}}`],
      ["deep resume", `{"interrupt_id":"i","decisions":[{"call_id":"c","approved":true,"edited_args":{"a":${deep(50_000)}}}]}`],
    ];
    for (const [what, body] of cases) {
      const path = what === "deep resume" ? "/threads/nope/resume" : "/threads";
      const r = await call(s.server.url, "POST", path, body);
      expect([r.status, r.json.error.code], what).toEqual([400, "invalid_request"]);
    }
    expect((await call(s.server.url, "POST", "/threads", { thread_id: threadId("m"), metadata: nested(32) })).status).toBe(201);
  });

  it("error messages echo at most 200 characters of input and never the open interrupt's id", async () => {
    const id = threadId("echo");
    s.model.push({ toolCalls: [{ id: "e1", name: "send_email", args: { to: "ada@example.com", subject: "s", body: "b" } }] });
    const intr = terminal(await s.client.run(id, "email").collect(), "interrupt");
    const huge = "z".repeat(200_000);
    for (const body of [
      { interrupt_id: huge, decisions: [{ call_id: "e1", approved: true }] },
      { interrupt_id: intr.interrupt_id, decisions: [{ call_id: huge, approved: true }] },
      { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "e1", approved: true, edited_args: { [huge.slice(0, 5000)]: 1 } }] },
    ]) {
      const r = await call(s.server.url, "POST", `/threads/${id}/resume`, body);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.json.error.message).not.toMatch(/z{201}/);
      expect(r.json.error.message).not.toContain(intr.interrupt_id);
    }
    await s.client.cancel(id);
  });
});

const WHO = ["alice", "bob", "carol", "dave", "erin"] as const;

describe("limits", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({
      AUTH_TOKENS: JSON.stringify(Object.fromEntries(WHO.map((w) => [`tok-${w}-000001`, { sub: w, roles: ["user"] }]))),
      RATE_LIMIT_RUNS_PER_MINUTE: "3",
      MAX_CONCURRENT_RUNS: "2",
      REQUEST_TIMEOUT_SECONDS: "1",
      MAX_CONNECTIONS: "16",
      HEARTBEAT_SECONDS: "0.2",
    });
  });
  afterAll(async () => {
    expectNoStackTraces(s.server);
    await s?.stop();
  });
  const as = (who: (typeof WHO)[number]) => ({ authorization: `Bearer tok-${who}-000001` });

  it("runs per principal per minute: the 4th is 429 with Retry-After; refused requests and other people do not count", async () => {
    s.model.push({ text: "1" }, { text: "2" }, { text: "3" }, { text: "b" });
    // Invalid and unauthorised requests use up nothing.
    for (let i = 0; i < 5; i++) expect((await call(s.server.url, "POST", `/threads/${threadId("r")}/runs`, { message: "" }, as("alice"))).status).toBe(400);
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${s.server.url}/threads/${threadId("rate")}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...as("alice") },
        body: JSON.stringify({ message: "hi" }),
      });
      expect(r.status).toBe(200);
      await r.text();
    }
    const limited = await fetch(`${s.server.url}/threads/${threadId("rate")}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...as("alice") },
      body: JSON.stringify({ message: "hi" }),
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    const bob = await fetch(`${s.server.url}/threads/${threadId("rate-b")}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...as("bob") },
      body: JSON.stringify({ message: "hi" }),
    });
    expect(bob.status).toBe(200);
    await bob.text();
  });

  it("a refused edit is a 400 and does not use up the run budget", async () => {
    const id = threadId("edit-budget");
    s.model.push({ toolCalls: [{ id: "eb1", name: "send_email", args: { to: "ada@example.com", subject: "s", body: "b" } }] }, { text: "ok" }, { text: "ok" });
    const erin = { "content-type": "application/json", ...as("erin") };
    const first = await fetch(`${s.server.url}/threads/${id}/runs`, { method: "POST", headers: erin, body: JSON.stringify({ message: "email" }) });
    const intr = terminal(parseSse(await first.text()).map((e) => ({ type: e.type, ...e.data })) as never, "interrupt");
    for (let i = 0; i < 5; i++) {
      const bad = await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "eb1", approved: true, edited_args: { to: "not-an-email" } }] }, as("erin"));
      expect([bad.status, bad.json.error.code]).toEqual([400, "invalid_request"]);
    }
    // Two of erin's three runs are left: a resume and one more message; then she is limited.
    expect((await call(s.server.url, "POST", `/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "eb1", approved: false }] }, as("erin"))).status).toBe(202);
    await (await fetch(`${s.server.url}/threads/${id}/stream`, { headers: as("erin") })).text(); // the resume's run, to its end
    const again = await fetch(`${s.server.url}/threads/${threadId("eb")}/runs`, { method: "POST", headers: erin, body: JSON.stringify({ message: "hi" }) });
    expect(again.status).toBe(200);
    await again.text();
    const limited = await call(s.server.url, "POST", `/threads/${threadId("eb")}/runs`, { message: "hi" }, as("erin"));
    expect(limited.status).toBe(429);
  });

  it("a request whose body never finishes is cut after REQUEST_TIMEOUT_SECONDS; a long stream is not", async () => {
    const { hostname, port } = new URL(s.server.url);
    // A stream that stays open well past the timeout: heartbeats keep coming.
    s.model.push({ hang: true, text: "thinking" });
    const id = threadId("long");
    const stream = await fetch(`${s.server.url}/threads/${id}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...as("bob") },
      body: JSON.stringify({ message: "take long" }),
    });
    const reader = stream.body!.getReader();
    const slow = net.connect(Number(port), hostname);
    slow.write(`POST /threads/x/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-carol-000001\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mess`);
    let pings = 0;
    const decoder = new TextDecoder();
    let answer = "";
    const closed = new Promise<void>((resolve) => slow.on("close", () => resolve()));
    slow.on("error", () => undefined);
    slow.setEncoding("utf8").on("data", (d: string) => (answer += d));
    // Read the stream until the half-sent request has been cut; the stream must still be delivering after.
    let cut = false;
    void closed.then(() => (cut = true));
    while (!cut || pings < 3) {
      const { value, done } = await reader.read();
      expect(done, "the stream ended while the slow upload was open").toBe(false);
      if (cut) pings += (decoder.decode(value).match(/: ping/g) ?? []).length;
    }
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    await call(s.server.url, "POST", `/threads/${id}/cancel`, undefined, as("bob"));
    await reader.cancel();
  });

  it("under a flood of half-open connections past MAX_CONNECTIONS, /healthz still answers and a live stream is not cut", async () => {
    const { hostname, port } = new URL(s.server.url);
    // A run that stays open, followed by a GET stream opened before the flood.
    s.model.push({ hang: true, text: "waiting" });
    const id = threadId("follow");
    const run = await fetch(`${s.server.url}/threads/${id}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", ...as("dave") },
      body: JSON.stringify({ message: "stay", on_disconnect: "continue" }),
    });
    const runReader = run.body!.getReader();
    await runReader.read();
    const follow = await fetch(`${s.server.url}/threads/${id}/stream`, { headers: as("dave") });
    const followReader = follow.body!.getReader();
    await followReader.read();
    const flood: net.Socket[] = [];
    let closedByServer = 0;
    for (let i = 0; i < 60; i++) {
      const sock = net.connect(Number(port), hostname);
      sock.on("error", () => undefined);
      sock.on("close", () => closedByServer++);
      await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
      sock.write(`POST /threads/f${i}/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-carol-000001\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n5\r\n{"mes\r\n`);
      flood.push(sock);
    }
    try {
      // Each probe on a new connection, as a load balancer's would be.
      for (let i = 0; i < 5; i++) expect((await raw(s.server.url, request("GET", "/healthz", { Host: "127.0.0.1" }))).status).toBe(200);
      // The cap held: the server closed the oldest half-open uploads instead of keeping them all.
      await expect.poll(() => closedByServer, { timeout: 5000 }).toBeGreaterThanOrEqual(60 - 16);
      // The follower (older than every flood socket) still gets its heartbeats.
      let pings = 0;
      while (pings < 3) {
        const { value, done } = await followReader.read();
        expect(done, "the GET stream was cut").toBe(false);
        pings += (new TextDecoder().decode(value).match(/: ping/g) ?? []).length;
      }
    } finally {
      for (const sock of flood) sock.destroy();
      await call(s.server.url, "POST", `/threads/${id}/cancel`, undefined, as("dave"));
      await followReader.cancel();
      await runReader.cancel();
    }
  });

  it("an upload the client abandons is one log line, not a stack trace", async () => {
    const { hostname, port } = new URL(s.server.url);
    const sock = net.connect(Number(port), hostname);
    sock.on("error", () => undefined);
    await new Promise<void>((resolve) => sock.on("connect", () => resolve()));
    const before = s.server.stdout().length;
    sock.write(`POST /threads/gone/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-bob-000001\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"message":"`);
    await new Promise((r) => setImmediate(r));
    sock.destroy();
    await expect.poll(() => s.server.stdout().slice(before), { timeout: 5000 }).toContain("request body aborted");
    // (Other tests' abandoned sockets log their own line: count this request's.)
    const added = s.server.stdout().slice(before).split("\n").filter((l) => l.includes("/threads/gone/runs"));
    expect(added).toHaveLength(1);
    expect(added[0]).toContain("request body aborted");
    // A chunked body is read by the body limit before the route: the same one line.
    const chunked = net.connect(Number(port), hostname);
    chunked.on("error", () => undefined);
    await new Promise<void>((resolve) => chunked.on("connect", () => resolve()));
    chunked.write(`POST /threads/gone-chunked/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-bob-000001\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mes\r\n`);
    await new Promise((r) => setImmediate(r));
    chunked.destroy();
    await expect.poll(() => s.server.stdout().slice(before), { timeout: 5000 }).toContain("/threads/gone-chunked/runs");
    const chunkedLines = s.server.stdout().slice(before).split("\n").filter((l) => l.includes("/threads/gone-chunked/runs"));
    expect(chunkedLines).toHaveLength(1);
    expect(chunkedLines[0]).toContain("request body aborted");
  });

  it("at MAX_CONCURRENT_RUNS in flight, a new run is 503 overloaded with Retry-After", async () => {
    s.model.push({ hang: true, text: "a" }, { hang: true, text: "b" });
    const open: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
    for (const who of ["carol", "dave"] as const) {
      const r = await fetch(`${s.server.url}/threads/${threadId("busy")}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...as(who) },
        body: JSON.stringify({ message: "hang", on_disconnect: "cancel" }),
      });
      expect(r.status).toBe(200);
      const reader = r.body!.getReader();
      await reader.read(); // its first event: the run is in flight
      open.push(reader);
    }
    const third = await call(s.server.url, "POST", `/threads/${threadId("busy")}/runs`, { message: "one more" }, as("bob"));
    expect([third.status, third.json.error.code]).toEqual([503, "overloaded"]);
    for (const reader of open) await reader.cancel();
  });
});

describe("CORS, when configured", () => {
  let s: Stack;
  let host: string;
  beforeAll(async () => {
    s = await startStack({ CORS_ORIGINS: "http://app.example, https://ops.example/" });
    host = new URL(s.server.url).host;
  });
  afterAll(async () => {
    expectNoStackTraces(s.server);
    await s?.stop();
  });

  it("answers a listed origin's preflight and requests with CORS headers; any other origin is still 403", async () => {
    const preflight = await raw(
      s.server.url,
      request("OPTIONS", "/threads/x/runs", {
        Host: host,
        Origin: "https://ops.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.head).toMatch(/access-control-allow-origin: https:\/\/ops\.example/i);
    expect(preflight.head).toMatch(/access-control-allow-headers: [^\r\n]*authorization/i);
    const id = threadId("cors");
    s.model.push({ text: "hi" });
    const listed = await raw(
      s.server.url,
      request("POST", `/threads/${id}/runs`, { Host: host, Origin: "http://app.example", "Content-Type": "application/json" }, '{"message":"hi"}'),
    );
    expect(listed.status).toBe(200);
    expect(listed.head).toMatch(/access-control-allow-origin: http:\/\/app\.example/i);
    expect(listed.head).toMatch(/access-control-expose-headers: [^\r\n]*X-Run-Id/i);
    const other = await raw(s.server.url, request("OPTIONS", "/threads/x/runs", { Host: host, Origin: "http://evil.example", "Access-Control-Request-Method": "POST" }));
    expect([other.status, codeOf(other)]).toEqual([403, "forbidden_origin"]);
  });
});
