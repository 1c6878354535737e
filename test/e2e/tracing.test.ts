import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { type LangSmithStandIn, startLangSmithStandIn } from "../helpers/langsmith-stand-in.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { expectNoStackTraces, only, terminal, threadId } from "./support.js";

// The real `langsmith` client in a real tollgate process, uploading to a local stand-in for the
// LangSmith API: what leaves the process is exactly what the stand-in receives.
const LANGSMITH_KEY = "lsv2-test-key-for-the-stand-in";
/** Every variable LangChain and the langsmith client read for tracing, unset unless a test sets it. */
const UNSET_TRACING_ENV = Object.fromEntries(
  [
    "LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING", "LANGCHAIN_TRACING_V2",
    "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_PROJECT", "LANGCHAIN_PROJECT",
    "LANGCHAIN_CALLBACKS_BACKGROUND", "LANGSMITH_RUNS_ENDPOINTS",
  ].map((k) => [k, undefined]),
);

let standIn: LangSmithStandIn | undefined;
let server: ServerProcess | undefined;
let model: FakeOpenAI | undefined;
afterEach(async () => {
  await server?.kill();
  await standIn?.close();
  await model?.close();
  server = standIn = model = undefined;
});

/**
 * The demo's email flow, approved with a new recipient: the customer's address (a masked output
 * of the lookup, then a masked argument of the email), the body (masked argument) and the edited
 * address (masked in the edit, the tool run and the result) all pass through the graph.
 */
async function emailFlow(client: TollgateClient) {
  const id = threadId("traced-email");
  const events = await client.run(id, "email the customer of A-1004 that we are sorry for the delay").collect();
  const intr = terminal(events, "interrupt");
  expect(intr.calls[0]).toMatchObject({ name: "send_email", args: { to: "***", subject: "About your order A-1004", body: "***" } });
  const resumed = await client.resume(id, intr.interrupt_id, { decisions: [{ call_id: intr.calls[0]!.call_id, approved: true, edited_args: { to: "new-inbox@example.com" } }] }).collect();
  expect(terminal(resumed, "done").message).toBe("Sent: the email to the customer of A-1004 is in the outbox.");
  expect(only(resumed, "tool_result")[0]).toMatchObject({ name: "send_email", status: "ok", edited: true });
  return { threadId: id, runIds: [events[0]!.run_id, resumed[0]!.run_id] };
}

/** The values the flow handles that no trace may carry. */
const SENSITIVE = ["edsger@example.com", "new-inbox@example.com", "Hello, we are sorry for the delay"];

async function start(env: Record<string, string | undefined>) {
  standIn = await startLangSmithStandIn();
  server = await startServer({
    MODEL: undefined,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
    DEMO_TOKEN_DELAY_MS: "0",
    ...UNSET_TRACING_ENV,
    LANGSMITH_ENDPOINT: standIn.url,
    LANGSMITH_API_KEY: LANGSMITH_KEY,
    ...env,
  });
  return new TollgateClient({ baseUrl: server.url });
}

describe("LangSmith tracing", () => {
  it("on: runs arrive with thread_id and run_id, and no masked value or secret leaves in any upload", async () => {
    const client = await start({ LANGSMITH_TRACING: "true", LANGSMITH_PROJECT: "tollgate-test" });
    const flow = await emailFlow(client);
    // A clean shutdown sends what is still queued: nothing is awaited by sleeping.
    expect(await server!.kill()).toBe(0);
    const runs = [...standIn!.runs.values()];

    // Traced, with the run's ids, and sent as the key's owner.
    const metadata = runs.map((r) => r.extra?.metadata ?? {});
    for (const runId of flow.runIds) {
      expect(metadata.some((m) => m.thread_id === flow.threadId && m.run_id === runId), `a run traced with run_id ${runId}`).toBe(true);
    }
    expect(standIn!.requests.filter((r) => r.path.startsWith("/runs")).every((r) => r.headers["x-api-key"] === LANGSMITH_KEY)).toBe(true);
    // The model's calls, the tools' runs and their results all went: the masks had something to mask.
    const toolRuns = runs.filter((r) => r.run_type === "tool");
    expect(toolRuns.map((r) => r.name).sort()).toEqual(["lookup_order", "send_email"]);
    const email = toolRuns.find((r) => r.name === "send_email")!;
    expect(email.inputs).toMatchObject({ to: "***", body: "***", subject: "About your order A-1004" });
    expect(runs.some((r) => r.run_type === "llm" && JSON.stringify(r.outputs ?? {}).includes("send_email"))).toBe(true);

    const uploaded = standIn!.allBodies();
    // What is not sensitive is there (so the check below cannot pass on an empty upload)…
    expect(uploaded).toContain("About your order A-1004");
    expect(uploaded).toContain("A-1004");
    // …and what is, nowhere: not in a model's input or output, a tool run, a node's state, an edit.
    for (const value of SENSITIVE) expect(uploaded, `an upload shows ${value}`).not.toContain(value);
    expect(uploaded).not.toContain(LANGSMITH_KEY);
    expectNoStackTraces(server!);
  });

  it("off: with the endpoint and key configured, not one request reaches it", async () => {
    const client = await start({});
    await emailFlow(client);
    expect(await server!.kill()).toBe(0);
    expect(standIn!.requests).toEqual([]);
  });

  it("LangSmith down: runs are not slowed or failed, and the log has one warning, no stack trace", async () => {
    const client = await start({ LANGSMITH_TRACING: "true" });
    await standIn!.close(); // the endpoint refuses connections from now on
    standIn = undefined;
    await emailFlow(client);
    await emailFlow(client);
    expect(await server!.kill()).toBe(0);
    const log = server!.stderr() + server!.stdout();
    expect(log.match(/LangSmith did not accept traces/g) ?? []).toHaveLength(1);
    // None of the langsmith client's own console output (it would print each failure, with stacks).
    expect(log).not.toMatch(/Error in (post|patch)Run|Error exporting batch|\[LANGSMITH\]|trace upload failed/);
    expectNoStackTraces(server!);
  });

  it("an upstream error that echoes the model key is traced with the key scrubbed", async () => {
    const key = "sk-test-TRACEDKEY12345678";
    model = await startFakeOpenAI();
    model.push({
      status: 401,
      body: JSON.stringify({ error: { message: `Incorrect API key provided: ${key}.`, type: "invalid_request_error", code: "invalid_api_key" } }),
    });
    const client = await start({ LANGSMITH_TRACING: "true", MODEL: "fake-model", OPENAI_API_KEY: key, OPENAI_BASE_URL: model.url });
    const events = await client.run(threadId("traced-401"), "hello").collect();
    expect(terminal(events, "error")).toMatchObject({ code: "model_error" });
    expect(await server!.kill()).toBe(0);
    // The failed model call is in the trace, saying what went wrong, without the key.
    const failed = [...standIn!.runs.values()].filter((r) => r.run_type === "llm" && typeof r.error === "string");
    expect(failed.map((r) => r.error).join("\n")).toContain("Incorrect API key provided: ***");
    expect(standIn!.allBodies()).not.toContain(key);
  });

  it("an approval that expires: the closer's state write is traced masked too (it brings no run config of its own)", async () => {
    const client = await start({ LANGSMITH_TRACING: "true", APPROVAL_TTL_SECONDS: "1", EXPIRY_SWEEP_MS: "50" });
    const id = threadId("traced-expiry");
    const events = await client.run(id, "email the customer of A-1004 that we are sorry for the delay").collect();
    terminal(events, "interrupt");
    const deadline = Date.now() + 10_000;
    while ((await client.getThread(id)).last_outcome !== "expired") {
      if (Date.now() > deadline) throw new Error("the interrupt did not expire");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await server!.kill()).toBe(0);
    // The closer's write (the expired answer, after the history it extends) went to LangSmith…
    const closerWrite = [...standIn!.runs.values()].find((r) => JSON.stringify(r.inputs ?? {}).includes("Expired: approval window closed"));
    expect(closerWrite?.extra?.metadata).toMatchObject({ thread_id: id });
    // …through the masking client, like the run's own.
    const uploaded = standIn!.allBodies();
    expect(uploaded).toContain("About your order A-1004");
    for (const value of ["edsger@example.com", "Hello, we are sorry for the delay"]) expect(uploaded, `an upload shows ${value}`).not.toContain(value);
  });

  it("LangSmith stalled (accepts, never answers): runs finish and shutdown still completes in its deadline", async () => {
    // A socket that takes every request and never says a word.
    const sockets = new Set<net.Socket>();
    const stalled = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    try {
      const port = (stalled.address() as net.AddressInfo).port;
      const client = await start({ LANGSMITH_TRACING: "true", LANGSMITH_ENDPOINT: `http://127.0.0.1:${port}` });
      await emailFlow(client);
      // The client did try to upload (polled: uploads leave in the background).
      const deadline = Date.now() + 10_000;
      while (sockets.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(sockets.size).toBeGreaterThan(0);
      // Exit code 0: `main` exits 1 when shutdown overruns its deadline (a flush waiting on LangSmith).
      expect(await server!.kill()).toBe(0);
      expect(server!.stderr() + server!.stdout()).toMatch(/LangSmith did not take the last traces in time/);
      expectNoStackTraces(server!);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => stalled.close(() => resolve()));
    }
  });
});
