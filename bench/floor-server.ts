/**
 * FLOOR: the least this stack can do to relay a model's tokens as SSE. A bare Hono app on
 * @hono/node-server, one endpoint, ChatOpenAICompletions `.stream()` straight into `streamSSE`,
 * no graph, no database. Frames look like tollgate's (`id`, `event: token`, one-line JSON). A
 * trivial `GET /healthz` (`{"ok":true}`) is there for the bench's prober.
 * Env: OPENAI_BASE_URL, MODEL. Prints `floor listening on http://127.0.0.1:<port>`.
 */
import { randomUUID } from "node:crypto";
import { serve } from "@hono/node-server";
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAICompletions } from "@langchain/openai";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";

const model = new ChatOpenAICompletions({
  model: process.env.MODEL ?? "fake",
  apiKey: process.env.OPENAI_API_KEY ?? "not-needed",
  configuration: { baseURL: process.env.OPENAI_BASE_URL, logLevel: "off" },
  streaming: true,
  streamUsage: true,
  maxRetries: 0,
});

const app = new Hono();
app.get("/healthz", (c) => c.json({ ok: true })); // for the bench's prober, like tollgate's
app.post("/stream", async (c) => {
  const { message } = await c.req.json<{ message: string }>();
  const signal = c.req.raw.signal; // fires when the client goes away: the model call is aborted
  return streamSSE(c, async (sse) => {
    const runId = randomUUID();
    let seq = 0;
    const frame = (event: string, data: object) =>
      sse.writeSSE({ id: `${runId}:${seq++}`, event, data: JSON.stringify({ run_id: runId, ...data }) });
    try {
      for await (const chunk of await model.stream([new HumanMessage(message)], { signal })) {
        if (chunk.text) await frame("token", { text: chunk.text });
      }
      await frame("done", { outcome: "completed" });
    } catch (err) {
      if (!signal.aborted) await frame("error", { code: "model_error", message: String(err) });
    }
  });
});

serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  process.stdout.write(`floor listening on http://127.0.0.1:${info.port}\n`);
});

// Exit normally on SIGTERM, so `node --cpu-prof` writes its profile.
process.once("SIGTERM", () => process.exit(0));
