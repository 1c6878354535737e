import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { type Stack, startStack, threadId, toolMessagesSeen, parseSse, expectNoneOf } from "./support.js";

// Sensitive values (the customer's address from lookup_order, send_email's `to` and `body`) are
// masked wherever a client or a log can see them, while the model and the tool get the real ones.
const EMAIL = "ada@example.com"; // A-1001's customer: lookup_order's output carries it too
const BODY = "Your refund code is ZX-7781-QP";
const SENSITIVE = [EMAIL, BODY];

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(async () => {
  await s?.stop();
});

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(s.server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.text(); // the raw SSE bytes, until the run's terminal event ends the stream
}

async function get(path: string): Promise<string> {
  const res = await fetch(s.server.url + path);
  expect(res.status, path).toBe(200);
  return res.text();
}

const expectNone = (where: string, text: string) => expectNoneOf(SENSITIVE, where, text);

describe("masking of sensitive arguments and outputs", () => {
  it("lookup_order then send_email: masked for clients, the store and the log; real for the model, the tool and the outbox", async () => {
    const id = threadId("mask");
    s.model.push(
      { toolCalls: [{ id: "mk1", name: "lookup_order", args: { order_id: "A-1001" } }] },
      { text: "I'll write to the customer.", toolCalls: [{ id: "mk2", name: "send_email", args: { to: EMAIL, subject: "About A-1001", body: BODY } }] },
    );
    const first = await post(`/threads/${id}/runs`, { message: "tell the customer of A-1001 their refund code" });
    expectNone("the run's SSE", first);
    const events = parseSse(first);
    expect(events.map((e) => e.type).filter((t) => t !== "token")).toEqual(["tool_call", "tool_result", "tool_call", "interrupt"]);
    const lookup = events.find((e) => e.type === "tool_result")!;
    expect(JSON.parse(lookup.data.output)).toMatchObject({ order_id: "A-1001", status: "shipped", customer_email: "***" });
    const emailCall = events.filter((e) => e.type === "tool_call")[1]!;
    expect(emailCall.data).toMatchObject({ call_id: "mk2", args: { to: "***", subject: "About A-1001", body: "***" }, needs_approval: true });
    const intr = events.at(-1)!.data;
    expect(intr.calls).toMatchObject([{ call_id: "mk2", args: { to: "***", subject: "About A-1001", body: "***" } }]);

    // The model read the real lookup result.
    expect(toolMessagesSeen(s.model.requests[1]!.body).get("mk1")).toContain(`"customer_email":"${EMAIL}"`);

    const view = await get(`/threads/${id}`);
    expectNone("GET /threads/:id", view);
    const parsed = JSON.parse(view);
    expect(parsed.pending.calls[0].args).toEqual({ to: "***", subject: "About A-1001", body: "***" });
    expect(parsed.messages.find((m: { role: string; tool_call_id?: string }) => m.tool_call_id === "mk1").content).toContain('"customer_email":"***"');
    const approvals = await get("/approvals");
    expect(approvals).toContain(intr.interrupt_id);
    expectNone("GET /approvals", approvals);

    s.model.push({ text: "Done: the email is in the outbox." });
    const second = await post(`/threads/${id}/resume`, { interrupt_id: intr.interrupt_id, decisions: [{ call_id: "mk2", approved: true }] });
    expectNone("the resume's SSE", second);
    const result = parseSse(second).find((e) => e.type === "tool_result")!.data;
    expect(result).toMatchObject({ call_id: "mk2", status: "ok" });
    expect(JSON.parse(result.output)).toMatchObject({ to: "***", subject: "About A-1001" });

    // The tool ran with the real arguments (approved by the hash of the real ones) …
    expect(s.db.rows("outbox", "call_id = ?", "mk2")).toMatchObject([{ to: EMAIL, subject: "About A-1001", body: BODY }]);
    // … and the model's next request carries the real call and the real result.
    const next = s.model.requests[2]!.body;
    const asked = next.messages.flatMap((m: { tool_calls?: Array<{ id: string; function: { arguments: string } }> }) => m.tool_calls ?? []);
    expect(JSON.parse(asked.find((c: { id: string }) => c.id === "mk2").function.arguments)).toEqual({ to: EMAIL, subject: "About A-1001", body: BODY });
    expect(toolMessagesSeen(next).get("mk2")).toContain(`"to":"${EMAIL}"`);
    expect(toolMessagesSeen(next).get("mk1")).toContain(EMAIL);

    const after = await get(`/threads/${id}`);
    expectNone("GET /threads/:id after the resume", after);
    expect(JSON.parse(after).messages.find((m: { tool_call_id?: string }) => m.tool_call_id === "mk2").content).toContain('"to":"***"');
    expectNone("GET /threads/:id/audit", await get(`/threads/${id}/audit`));
    expectNone("GET /threads", await get("/threads"));
    // A replay of both runs comes from the stored log.
    const replay = await get(`/threads/${id}/stream`);
    expect(replay).toContain("event: done");
    expectNone("the stream replayed", replay);

    const stored = (s.db.prepare("SELECT frames FROM run_event_batches").all() as Array<{ frames: string }>).map((r) => r.frames).join("\n");
    expect(stored).toContain('\\"customer_email\\":\\"***\\"');
    expectNone("run_event_batches", stored);
    expectNone("the server's stdout and stderr", s.server.stdout() + s.server.stderr());
  });

  it("a crash after the email went out: the run closed at restart (written by the settler, not a live log) is masked too", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-mask-kill-"));
    const env = { MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: s.model.url };
    const id = threadId("mask-kill");
    const servers = [];
    try {
      s.model.push({ toolCalls: [{ id: "mk9", name: "send_email", args: { to: EMAIL, subject: "About A-1001", body: BODY } }] });
      const a = await startServer(env, { dataDir });
      servers.push(a);
      const first = parseSse(await (await fetch(`${a.url}/threads/${id}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "write to the customer of A-1001" }),
      })).text());
      const intr = first.at(-1)!;
      expect(intr.type).toBe("interrupt");
      await a.kill();

      // Dies right after the ledger records the sent email, before its tool message is written.
      const doomed = await startServer({ ...env, TOLLGATE_KILL_AT: "ledger-settle:after" }, { dataDir });
      servers.push(doomed);
      await fetch(`${doomed.url}/threads/${id}/resume`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ interrupt_id: intr.data.interrupt_id, decisions: [{ call_id: "mk9", approved: true }] }),
      }).then((r) => r.text()).catch(() => undefined);
      expect((await doomed.exited).signal).toBe("SIGKILL");

      const after = await startServer(env, { dataDir });
      servers.push(after);
      const db = openDb(dataDir);
      try {
        expect(db.rows("outbox", "call_id = ?", "mk9")).toMatchObject([{ to: EMAIL, body: BODY }]);
        const frames = (db.prepare("SELECT frames FROM run_event_batches").all() as Array<{ frames: string }>).map((r) => r.frames).join("\n");
        // The settler answered the call from the ledger, with the tool's real output, and ended the run.
        expect(frames).toMatch(/tool_result\t.*"call_id":"mk9".*"status":"ok"/);
        expect(frames).toContain('\\"to\\":\\"***\\"');
        expectNone("run_event_batches after recovery", frames);
      } finally {
        db.close();
      }
      const view = await (await fetch(`${after.url}/threads/${id}`)).text();
      expect(view).toContain('\\"to\\":\\"***\\"');
      expectNone("GET /threads/:id after recovery", view);
      expectNone("the servers' logs", servers.map((x) => x.stdout() + x.stderr()).join("\n"));
    } finally {
      await Promise.all(servers.map((x) => x.kill()));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
