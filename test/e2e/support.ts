import { expect } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { isTerminal, type EventOf, type ProtocolEvent } from "../../src/protocol/index.js";
import { type FakeOpenAI, startFakeOpenAI, type FakeOpenAIOptions } from "../helpers/fake-openai.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { openDb, type TestDb } from "../helpers/sqlite.js";
import { within } from "../helpers/within.js";

export interface Stack {
  model: FakeOpenAI;
  server: ServerProcess;
  client: TollgateClient;
  db: TestDb;
  stop(): Promise<void>;
}

/** A real tollgate process on a real OpenAI-compatible test server, with a read-only view of its database. */
export async function startStack(env: Record<string, string> = {}, modelOpts: FakeOpenAIOptions = {}): Promise<Stack> {
  const model = await startFakeOpenAI(modelOpts);
  const server = await startServer({
    MODEL: "fake-model",
    OPENAI_API_KEY: "test-key",
    OPENAI_BASE_URL: model.url,
    TOLLGATE_TEST_TOOLS: "1",
    ...env,
  });
  const db = openDb(server.dataDir);
  // With AUTH_TOKENS set, the stack's client speaks as the first token's principal.
  const token = env.AUTH_TOKENS ? Object.keys(JSON.parse(env.AUTH_TOKENS) as object)[0] : undefined;
  const client = new TollgateClient({ baseUrl: server.url, token });
  return {
    model,
    server,
    client,
    db,
    async stop() {
      db.close();
      await server.kill();
      await model.close();
    },
  };
}

/** Every stream ends with exactly one terminal event and nothing after it. */
export function expectOneTerminal(events: ProtocolEvent[]): ProtocolEvent {
  const terminals = events.filter(isTerminal);
  expect(terminals, `terminal events in ${JSON.stringify(events.map((e) => e.type))}`).toHaveLength(1);
  expect(events.at(-1)).toBe(terminals[0]);
  return terminals[0]!;
}

export const types = (events: ProtocolEvent[]) => events.map((e) => e.type).filter((t) => t !== "token");
export const tokensText = (events: ProtocolEvent[]) =>
  events.filter((e): e is EventOf<"token"> => e.type === "token").map((e) => e.text).join("");
export function only<T extends ProtocolEvent["type"]>(events: ProtocolEvent[], type: T): EventOf<T>[] {
  return events.filter((e): e is EventOf<T> => e.type === type);
}
export function terminal<T extends ProtocolEvent["type"]>(events: ProtocolEvent[], type: T): EventOf<T> {
  const t = expectOneTerminal(events);
  expect(t.type).toBe(type);
  return t as EventOf<T>;
}

let n = 0;
/** A thread id unique within the test process. */
export const threadId = (label: string) => `${label}-${process.pid}-${++n}`;

/** The tool messages a model request carried, by call id. */
export function toolMessagesSeen(body: { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> }) {
  const out = new Map<string, string>();
  for (const m of body.messages) {
    if (m.role !== "tool") continue;
    const text = Array.isArray(m.content) ? m.content.map((p: { text?: string }) => p.text ?? "").join("") : String(m.content);
    out.set(m.tool_call_id!, text);
  }
  return out;
}

/** The server's log must not carry stack traces: errors are reported, not dumped (as text, or in a JSON line's `err.stack`). */
export function expectNoStackTraces(server: ServerProcess): void {
  const log = server.stderr() + server.stdout();
  expect(log).not.toMatch(/(\n|\\n)\s+at .+:\d+:\d+\)?/);
}

/** A raw request, for asserting statuses and error bodies exactly. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; contentType: string | null; headers: Headers; text: string }> {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, contentType: res.headers.get("content-type"), headers: res.headers, text };
}

/** A whole SSE body's events, `data` parsed. */
export function parseSse(text: string): Array<{ type: string; data: any }> {
  return text
    .split("\n\n")
    .map((block) => [/^event: (.+)$/m.exec(block)?.[1], /^data: (.+)$/m.exec(block)?.[1]] as const)
    .filter(([type, data]) => type && data)
    .map(([type, data]) => ({ type: type!, data: JSON.parse(data!) }));
}

/** None of `values` shows anywhere in `text` (a masked field, a secret). */
export function expectNoneOf(values: readonly string[], where: string, text: string): void {
  for (const v of values) expect(text, `${where} shows ${v}`).not.toContain(v);
}

/**
 * The thread once the server has let it go idle by itself (an expiry closing its interrupt): read
 * until then, and failing with `failure` after `ms`.
 */
export function whenIdle(client: TollgateClient, threadId: string, failure: string, ms = 10_000) {
  return within(
    (async () => {
      for (;;) {
        const view = await client.getThread(threadId);
        if (view.status === "idle") return view;
        await new Promise((r) => setTimeout(r, 50));
      }
    })(),
    { ms, failure, since: "its deadline" },
  );
}
