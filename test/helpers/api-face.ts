/**
 * The two APIs a client can drive a run through, behind one interface, so a guarantee is written
 * once and run against each: tollgate's own (its typed client) and LangGraph's at `/langgraph`
 * (LangGraph's SDK `Client`, decisions by position in `action_requests`). Failures carry the
 * HTTP status in `status` either way.
 */
import { Client } from "@langchain/langgraph-sdk";
import WebSocket from "ws";
import { TollgateClient } from "../../src/client/index.js";
import { ERROR_STATUS, isErrorCode, isTerminal, type ProtocolEvent } from "../../src/protocol/index.js";

export type FaceName = "tollgate" | "langgraph" | "thread-stream" | "thread-socket";
/**
 * tollgate's own API; LangGraph's run-centric one; LangGraph's thread-centric one through the SDK's
 * `ThreadStream`, over SSE and over its WebSocket transport.
 */
export const FACES: readonly FaceName[] = ["tollgate", "langgraph", "thread-stream", "thread-socket"];

/** How a run ended, as either API lets a client see it. */
export type Ending =
  | { kind: "interrupt"; interruptId: string; calls: Array<{ callId: string; name: string; args: Record<string, unknown> }> }
  | { kind: "done"; text: string }
  | { kind: "cancelled" }
  | { kind: "error"; message: string };

export interface FaceDecision {
  callId: string;
  approved: boolean;
  reason?: string;
  /** Keys that replace the call's arguments. */
  editedArgs?: Record<string, unknown>;
}

/** One principal's client on one API. */
export interface ApiClient {
  /** Sends a message and reads the run to its end. Everything the stream carried, as text, is in `wire`. */
  send(threadId: string, message: string): Promise<{ ending: Ending; wire: string }>;
  /** Decides interrupt `interruptId` (as its run's ending named it); reads the resumed run to its end. */
  decide(threadId: string, interruptId: string, decisions: FaceDecision[]): Promise<{ ending: Ending; wire: string }>;
  /** Stops what runs on the thread. */
  cancel(threadId: string): Promise<void>;
  /** The thread as this API shows it, as text (for what must never appear in it). */
  read(threadId: string): Promise<string>;
}

export function apiClient(face: FaceName, baseUrl: string, token: string | undefined): ApiClient {
  if (face === "thread-stream" || face === "thread-socket") return threadStreamFace({ baseUrl, token, socket: face === "thread-socket" });
  return face === "tollgate" ? tollgateFace(baseUrl, token) : langGraphFace(baseUrl, token);
}

function tollgateFace(baseUrl: string, token: string | undefined): ApiClient {
  const client = new TollgateClient({ baseUrl, token });
  const ended = (events: ProtocolEvent[]) => ({ ending: endingOf(events), wire: JSON.stringify(events) });
  return {
    send: async (threadId, message) => ended(await client.run(threadId, message).collect()),
    async decide(threadId, interruptId, decisions) {
      const wire = decisions.map((d) => ({ call_id: d.callId, approved: d.approved, ...(d.reason ? { reason: d.reason } : {}), ...(d.editedArgs ? { edited_args: d.editedArgs } : {}) }));
      return ended(await client.resume(threadId, interruptId, { decisions: wire }).collect());
    },
    cancel: async (threadId) => void (await client.cancel(threadId)),
    read: async (threadId) => JSON.stringify(await client.getThread(threadId)),
  };
}

function endingOf(events: ProtocolEvent[]): Ending {
  const last = events.find(isTerminal);
  switch (last?.type) {
    case "interrupt":
      return { kind: "interrupt", interruptId: last.interrupt_id, calls: last.calls.map((c) => ({ callId: c.call_id, name: c.name, args: c.args })) };
    case "done":
      return { kind: "done", text: last.message };
    case "cancelled":
      return { kind: "cancelled" };
    default:
      return { kind: "error", message: last?.type === "error" ? last.message : "no terminal event" };
  }
}

type Part = { event: string; data: unknown };
type HitlValue = { action_requests: Array<{ name: string; args: Record<string, unknown> }>; tollgate: { interrupt_id: string; calls: Array<{ call_id: string }> } };

function langGraphFace(baseUrl: string, token: string | undefined): ApiClient {
  const client = new Client({ apiUrl: `${baseUrl}/langgraph`, apiKey: token ?? null, callerOptions: { maxRetries: 0 } });
  const read = async (stream: AsyncIterable<Part>) => {
    const parts: Part[] = [];
    for await (const p of stream) parts.push(p);
    return { ending: langGraphEnding(parts), wire: JSON.stringify(parts) };
  };
  const modes = ["values", "updates", "messages-tuple"] as const;
  return {
    send: (threadId, message) => read(client.runs.stream(threadId, "agent", { input: { messages: [{ type: "human", content: message }] }, streamMode: [...modes] })),
    async decide(threadId, _interruptId, decisions) {
      // By position in the interrupt's action requests, as Agent Chat UI sends them: the open one's.
      const positional = await positionalDecisions(client, threadId, decisions);
      return read(client.runs.stream(threadId, "agent", { command: { resume: { decisions: positional } }, streamMode: [...modes] }));
    },
    async cancel(threadId) {
      const [latest] = await client.runs.list(threadId, { limit: 1 });
      if (latest) await client.runs.cancel(threadId, latest.run_id, true);
    },
    read: async (threadId) => JSON.stringify([await client.threads.get(threadId), await client.threads.getState(threadId)]),
  };
}

/** Decisions by position in the open interrupt's action requests, as Agent Chat UI sends them. */
async function positionalDecisions(client: Client, threadId: string, decisions: FaceDecision[]) {
  const state = await client.threads.getState(threadId);
  const value = state.tasks[0]?.interrupts[0]?.value as HitlValue | undefined;
  const order = value?.tollgate.calls.map((c) => c.call_id) ?? decisions.map((d) => d.callId);
  const byCall = new Map(decisions.map((d) => [d.callId, d]));
  return order.map((callId, i) => {
    const d = byCall.get(callId);
    if (!d) return { type: "reject", message: "no decision" };
    if (!d.approved) return { type: "reject", ...(d.reason ? { message: d.reason } : {}) };
    if (!d.editedArgs) return { type: "approve" };
    const shown = value!.action_requests[i]!;
    return { type: "edit", edited_action: { name: shown.name, args: { ...shown.args, ...d.editedArgs } } };
  });
}

type ThreadEvent = { method: string; params: { namespace: string[]; data: any } };
const TERMINAL_LIFECYCLE = new Set(["completed", "failed", "interrupted"]);
const isRootEnd = (e: ThreadEvent) => e.method === "lifecycle" && e.params.namespace.length === 0 && TERMINAL_LIFECYCLE.has(e.params.data.event);

/**
 * LangGraph's thread-centric protocol through the SDK's `ThreadStream` (SSE): a command, then a
 * stream opened from the seq it answers with, read up to the run's end. A refused command carries
 * tollgate's code, which the face turns into that code's status for the shared assertions.
 */
function threadStreamFace(o: { baseUrl: string; token: string | undefined; socket: boolean }): ApiClient {
  const { baseUrl, token } = o;
  const client = new Client({ apiUrl: `${baseUrl}/langgraph`, apiKey: token ?? null, callerOptions: { maxRetries: 0 } });
  // The SDK's WebSocket transport sends no headers of its own: Node's `ws` carries the token.
  const transport = o.socket
    ? { transport: "websocket" as const, webSocketFactory: (url: string) => new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {}) as unknown as globalThis.WebSocket }
    : {};
  // The SDK refuses a WebSocket on a client with default headers: the socket's client has none.
  const streams = o.socket ? new Client({ apiUrl: `${baseUrl}/langgraph`, apiKey: null, callerOptions: { maxRetries: 0 } }) : client;
  const open = (threadId: string) => streams.threads.stream(threadId, { assistantId: "agent", ...transport });
  // A socket the server refused is closed before the SDK's first command, which then fails as
  // "not open": the refusal's status is what the server closed a socket to that thread with.
  const refused = async (threadId: string, err: unknown): Promise<never> => {
    if (!o.socket || !/not open/.test(String((err as Error).message))) throw err;
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/langgraph/threads/${threadId}/stream/events`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      ws.on("close", (c) => resolve(c));
    });
    throw Object.assign(new Error(`socket closed ${code}`), { status: code - 4000 });
  };
  async function command(threadId: string, act: (thread: ReturnType<Client["threads"]["stream"]>) => Promise<unknown>) {
    const thread = open(threadId);
    try {
      const result = (await act(thread).catch((err) => refused(threadId, err)).catch(asStatusError)) as { status?: string } | undefined;
      const events: ThreadEvent[] = [];
      if (result?.status !== "waiting_human") {
        // The command's answer says where its run begins; the SDK's shared stream may also carry
        // the run before it, which is left out here.
        const applied = thread.ordering.lastAppliedThroughSeq ?? -1;
        const sub = await thread.subscribe(["lifecycle", "messages", "tools", "input", "values"]);
        // The SDK pauses a subscription at each run's end (an iteration is one run): resumed by the next run's events.
        const next = sub[Symbol.asyncIterator]();
        for (;;) {
          const r = await next.next();
          if (r.done) {
            if (sub.isPaused) await sub.waitForResume();
            else break;
            continue;
          }
          const e = r.value as ThreadEvent & { seq: number };
          if (e.seq <= applied) continue;
          events.push(e);
          if (isRootEnd(e)) break;
        }
      }
      const ending = threadEnding(events);
      // The answer as the thread's state holds it once the run has ended (the stream's own
      // `values` may have gone to the SDK's other subscriptions before this one was registered).
      if (ending.kind === "done") {
        const state = (await thread.state.get({ namespace: [] })) as { values: { messages: Array<{ type: string; content: string }> } };
        ending.text = state.values.messages.at(-1)?.content ?? "";
      }
      return { ending, wire: JSON.stringify(events) };
    } finally {
      await thread.close();
    }
  }
  return {
    send: (threadId, message) => command(threadId, (t) => t.run.start({ input: { messages: [{ type: "human", content: message }] } })),
    async decide(threadId, interruptId, decisions) {
      const positional = await positionalDecisions(client, threadId, decisions).catch(asStatusError);
      return command(threadId, (t) => t.input.respond({ namespace: [], interrupt_id: interruptId, response: { decisions: positional } }));
    },
    async cancel(threadId) {
      const [latest] = await client.runs.list(threadId, { limit: 1 });
      if (latest) await client.runs.cancel(threadId, latest.run_id, true);
    },
    async read(threadId) {
      const thread = open(threadId);
      try {
        const tree = await thread.agent.getTree().catch((err) => refused(threadId, err)).catch(asStatusError);
        return JSON.stringify([tree, await thread.state.get({ namespace: [] }).catch(asStatusError)]);
      } finally {
        await thread.close();
      }
    },
  };
}

/** A command's refusal as the other faces show it: tollgate's code's HTTP status in `status`. */
function asStatusError(err: unknown): never {
  const code = (err as { response?: { tollgate?: { code?: string } } }).response?.tollgate?.code;
  if (isErrorCode(code)) throw Object.assign(new Error((err as Error).message), { status: ERROR_STATUS[code], code });
  throw err;
}

function threadEnding(events: ThreadEvent[]): Ending {
  const end = events.findLast(isRootEnd);
  if (!end) return { kind: "error", message: "no terminal lifecycle event" };
  if (end.params.data.event === "failed") {
    return end.params.data.error === "cancelled" ? { kind: "cancelled" } : { kind: "error", message: String(end.params.data.error ?? "") };
  }
  if (end.params.data.event === "interrupted") {
    const request = events.findLast((e) => e.method === "input.requested")!.params.data as { payload: HitlValue };
    const v = request.payload;
    const calls = v.tollgate.calls.map((c, i) => ({ callId: c.call_id, name: v.action_requests[i]!.name, args: v.action_requests[i]!.args }));
    return { kind: "interrupt", interruptId: v.tollgate.interrupt_id, calls };
  }
  const values = events.findLast((e) => e.method === "values")?.params.data as { messages?: Array<{ type: string; content: string }> } | undefined;
  return { kind: "done", text: values?.messages?.at(-1)?.content ?? "" };
}

function langGraphEnding(parts: Part[]): Ending {
  const error = parts.find((p) => p.event === "error");
  if (error) return { kind: "error", message: String((error.data as { message?: string }).message ?? "") };
  const chunk = parts.find((p) => p.event === "values" && "__interrupt__" in (p.data as object));
  if (chunk) {
    const [intr] = (chunk.data as { __interrupt__: Array<{ id: string; value: HitlValue }> }).__interrupt__;
    const calls = intr!.value.tollgate.calls.map((c, i) => ({ callId: c.call_id, name: intr!.value.action_requests[i]!.name, args: intr!.value.action_requests[i]!.args }));
    return { kind: "interrupt", interruptId: intr!.id, calls };
  }
  const values = parts.filter((p) => p.event === "values").at(-1)?.data as { messages?: Array<{ type: string; content: string }> } | undefined;
  const last = values?.messages?.at(-1);
  // A cancelled run ends with the state it had: no answer after the user's message.
  if (!last || last.type !== "ai") return { kind: "cancelled" };
  return { kind: "done", text: last.content };
}
