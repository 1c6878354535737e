/**
 * The two APIs a client can drive a run through, behind one interface, so a guarantee is written
 * once and run against each: tollgate's own (its typed client) and LangGraph's at `/langgraph`
 * (LangGraph's SDK `Client`, decisions by position in `action_requests`). Failures carry the
 * HTTP status in `status` either way.
 */
import { Client } from "@langchain/langgraph-sdk";
import { TollgateClient } from "../../src/client/index.js";
import { isTerminal, type ProtocolEvent } from "../../src/protocol/index.js";

export type FaceName = "tollgate" | "langgraph";
export const FACES: readonly FaceName[] = ["tollgate", "langgraph"];

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
      const state = await client.threads.getState(threadId);
      const value = state.tasks[0]?.interrupts[0]?.value as HitlValue | undefined;
      const order = value?.tollgate.calls.map((c) => c.call_id) ?? decisions.map((d) => d.callId);
      const byCall = new Map(decisions.map((d) => [d.callId, d]));
      const positional = order.map((callId, i) => {
        const d = byCall.get(callId);
        if (!d) return { type: "reject", message: "no decision" };
        if (!d.approved) return { type: "reject", ...(d.reason ? { message: d.reason } : {}) };
        if (!d.editedArgs) return { type: "approve" };
        const shown = value!.action_requests[i]!;
        return { type: "edit", edited_action: { name: shown.name, args: { ...shown.args, ...d.editedArgs } } };
      });
      return read(client.runs.stream(threadId, "agent", { command: { resume: { decisions: positional } }, streamMode: [...modes] }));
    },
    async cancel(threadId) {
      const [latest] = await client.runs.list(threadId, { limit: 1 });
      if (latest) await client.runs.cancel(threadId, latest.run_id, true);
    },
    read: async (threadId) => JSON.stringify([await client.threads.get(threadId), await client.threads.getState(threadId)]),
  };
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
