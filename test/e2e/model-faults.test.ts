import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { historyProblem, type RecordedRequest } from "../helpers/fake-openai.js";
import { within } from "../helpers/within.js";
import { expectNoStackTraces, only, type Stack, startStack, terminal, threadId, tokensText, types } from "./support.js";

// Model servers that misbehave in the ways real ones do. The fake is strict: a history OpenAI
// would refuse gets a 400, so "the thread is usable" means the next call's history is valid.
let s: Stack;
beforeAll(async () => {
  s = await startStack({ MODEL_FIRST_TOKEN_TIMEOUT_SECONDS: "0.5", MODEL_IDLE_TIMEOUT_SECONDS: "0.3" });
});
afterAll(async () => {
  expectNoStackTraces(s.server);
  await s?.stop();
});

/**
 * The model server saw the request's connection closed before the answer was over. Bounded well
 * inside the test timeout, so a broken abort fails saying so: an abort is a socket close, at once.
 */
const aborted = (req: RecordedRequest, since: string) =>
  within(req.closed, { ms: 5_000, failure: "the model's HTTP request was not aborted", since });

/** The thread takes the next message, and the model is sent a valid history for it. */
async function expectUsable(id: string) {
  s.model.push({ text: "Back to normal." });
  expect(terminal(await s.client.run(id, "are you there?").collect(), "done").message).toBe("Back to normal.");
  const last = s.model.requests.at(-1)!;
  expect(last.invalid).toBeUndefined();
  expect(historyProblem(last.messages)).toBeNull();
}

describe("a model that goes silent", () => {
  it("only keep-alive comments after the headers: model_timeout after the first-token timeout, socket closed", async () => {
    const id = threadId("keepalive");
    s.model.push({ keepAlive: true, everyMs: 20 });
    const events = await s.client.run(id, "hello").collect();
    const err = terminal(events, "error");
    expect(err.code).toBe("model_timeout");
    expect(err.message).toBe("Model timed out: no output within 0.5 s of the request");
    await aborted(s.model.requests.at(-1)!, "the run's model_timeout"); // not left hanging
    expect(await s.client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "error" });
    await expectUsable(id);
  });

  it("headers and then not one byte: model_timeout", async () => {
    const id = threadId("stall");
    s.model.push({ stall: true });
    expect(terminal(await s.client.run(id, "hello").collect(), "error").code).toBe("model_timeout");
    await aborted(s.model.requests.at(-1)!, "the run's model_timeout");
    await expectUsable(id);
  });

  it("silent mid-answer (keep-alives only): model_timeout after the idle timeout, the half answer is not kept", async () => {
    const id = threadId("idle");
    s.model.push({ keepAlive: true, text: "Half an answer", everyMs: 20 });
    const events = await s.client.run(id, "hello").collect();
    expect(tokensText(events)).toBe("Half an answer");
    const err = terminal(events, "error");
    expect([err.code, err.message]).toEqual(["model_timeout", "Model timed out: no output for 0.3 s in the middle of its answer"]);
    const view = await s.client.getThread(id);
    expect(view.messages.map((m) => m.role)).toEqual(["user"]);
    await expectUsable(id);
  });

  it("a cancel during a stall still wins: cancelled, not a timeout", async () => {
    const slow = await startStack({ MODEL_FIRST_TOKEN_TIMEOUT_SECONDS: "60" });
    try {
      const id = threadId("cancel-stall");
      slow.model.push({ keepAlive: true, everyMs: 20 });
      const stream = slow.client.run(id, "hello");
      const req = await slow.model.nextRequest();
      expect((await slow.client.cancel(id)).cancelled).toBe(true);
      await aborted(req, "the cancel");
      expect(terminal(await stream.collect(), "cancelled").reason).toBe("api");
    } finally {
      await slow.stop();
    }
  });
});

describe("malformed answers", () => {
  it("tool-call fragments without index make one call, not one per fragment", async () => {
    const id = threadId("no-index");
    s.model.push(
      { toolCalls: [{ id: "ni1", name: "lookup_order", args: { order_id: "A-1001" } }], noIndex: true },
      { text: "It has shipped." },
    );
    const events = await s.client.run(id, "where is A-1001").collect();
    expect(types(events)).toEqual(["tool_call", "tool_result", "done"]);
    expect(only(events, "tool_call")[0]).toMatchObject({ call_id: "ni1", name: "lookup_order", args: { order_id: "A-1001" } });
    expect(only(events, "tool_result")[0]).toMatchObject({ call_id: "ni1", status: "ok" });
    expect(s.model.requests.at(-1)!.invalid).toBeUndefined();
    await expectUsable(id);
  });

  it("a call without a valid name is answered 'malformed tool call' as invalid_tool_call; the run goes on", async () => {
    const id = threadId("nameless");
    s.model.push(
      { toolCalls: [{ id: "nn1", name: "", args: { x: 1 } }, { id: "nn2", name: "look up!", args: {} }] },
      { text: "Sorry about that." },
    );
    const events = await s.client.run(id, "do something").collect();
    expect(only(events, "tool_call").map((e) => [e.call_id, e.name, e.needs_approval])).toEqual([
      ["nn1", "invalid_tool_call", false],
      ["nn2", "invalid_tool_call", false],
    ]);
    expect(only(events, "tool_result").map((e) => [e.call_id, e.name, e.status, e.error])).toEqual([
      ["nn1", "invalid_tool_call", "error", "malformed tool call"],
      ["nn2", "invalid_tool_call", "error", "malformed tool call"],
    ]);
    expect(terminal(events, "done").message).toBe("Sorry about that.");
    expect(s.model.requests.at(-1)!.invalid).toBeUndefined();
    await expectUsable(id);
  });

  it("a gateway's HTML 502 page is a one-line model_error, not the page", async () => {
    const id = threadId("html502");
    s.model.push({ status: 502, body: "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>\n" });
    const err = terminal(await s.client.run(id, "hello").collect(), "error");
    expect(err.code).toBe("model_error");
    expect(err.message).not.toContain("\n");
    expect(err.message).toMatch(/^Model call failed: 502/);
    await expectUsable(id);
  });
});

describe("a server that reuses completion ids", () => {
  it("keeps every answer: ids of the thread's messages are tollgate's own", async () => {
    const reused = await startStack({}, { completionIds: "constant" });
    try {
      const id = threadId("reused-ids");
      reused.model.push({ toolCalls: [{ id: "r1", name: "lookup_order", args: { order_id: "A-1002" } }] }, { text: "Found it." });
      terminal(await reused.client.run(id, "where is A-1002").collect(), "done");
      reused.model.push({ text: "Anything else?" });
      terminal(await reused.client.run(id, "thanks").collect(), "done");
      expect(reused.model.requests.every((r) => r.invalid === undefined)).toBe(true);
      const view = await reused.client.getThread(id);
      expect(view.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"]);
    } finally {
      await reused.stop();
    }
  });
});

describe("a client gone before its response was built", () => {
  it("cancels the run (on_disconnect defaults to cancel): a model request it made is aborted", async () => {
    const id = threadId("early-gone");
    s.model.push({ hang: true });
    const body = JSON.stringify({ message: "hello, then gone" });
    const { hostname, port } = new URL(s.server.url);
    const socket = net.connect(Number(port), hostname);
    // The whole request, then the connection closes at once: no one will read the answer.
    socket.end(
      `POST /threads/${id}/runs HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    // The run ends cancelled; where the server noticed first (a database round trip before the
    // model call), there may be no model request at all.
    const end = Date.now() + 15_000;
    const settled = async () => (await s.client.getThread(id).then((t) => t.status === "idle", () => false));
    while (!(await settled())) {
      if (Date.now() > end) throw new Error("the run did not end within 15 s of its client going away");
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(terminal(await s.client.stream(id).collect(), "cancelled").reason).toBe("client");
    // A model request it did make was aborted: none is left open.
    const made = s.model.requests.filter((r) => r.messages.at(-1)?.content === "hello, then gone");
    await Promise.all(made.map((r) => aborted(r, "the run's end")));
    s.model.clearQueue(); // the hanging turn, if no request took it
    await expectUsable(id);
  });
});

