/**
 * Figure 4: resume latency, from sending the approval to the first event of the continuation
 * (the approved tool's result). Threads are first brought to the gate (the model asks for
 * refund_order), then resumed one at a time, TOLLGATE and PEER alternating in blocks.
 * FLOOR has no threads, so no figure.
 */
import { Client } from "@langchain/langgraph-sdk";
import { TollgateClient } from "../../src/client/index.js";
import { nowUs } from "../clock.js";
import { type BenchContext, type Row } from "../context.js";
import { directive } from "../directive.js";
import { dist } from "../stats.js";

const REFUND = directive({ mode: "refund" });
const BLOCK = 10;

interface Waiting {
  threadId: string;
  resume(): Promise<number>;
}

export async function resumeSuite(ctx: BenchContext): Promise<Row[]> {
  const n = ctx.settings.resume.count;
  ctx.focus("tollgate");
  const ours = await prepare(n, tollgateWaiting(ctx.targets.tollgate.child.url));
  ctx.focus("peer");
  const peer = await prepare(n, peerWaiting(ctx.targets.peer.child.url));
  const ms = { tollgate: [] as number[], peer: [] as number[] };
  for (let i = 0; i < n; i += BLOCK) {
    for (const [name, list] of (i / BLOCK) % 2 ? ([["peer", peer], ["tollgate", ours]] as const) : ([["tollgate", ours], ["peer", peer]] as const)) {
      ctx.focus(name);
      for (const w of list.slice(i, i + BLOCK)) ms[name].push(await w.resume());
    }
  }
  const t = dist(ms.tollgate);
  const p = dist(ms.peer);
  ctx.log(`  tollgate p50 ${t.p50.toFixed(2)} p99 ${t.p99.toFixed(2)} ms; peer p50 ${p.p50.toFixed(2)} p99 ${p.p99.toFixed(2)} ms`);
  return [
    { group: "resume", figure: "resume → first event p50", unit: "ms", better: "lower", values: { tollgate: t.p50, peer: p.p50 }, detail: { resumes: n } },
    { group: "resume", figure: "resume → first event p99", unit: "ms", better: "lower", values: { tollgate: t.p99, peer: p.p99 } },
  ];
}

/** Brings `n` threads to the gate, a few at a time (this part is not measured). */
async function prepare(n: number, make: () => Promise<Waiting>): Promise<Waiting[]> {
  const out: Waiting[] = [];
  const worker = async () => {
    while (out.length < n) {
      const slot = out.length;
      out.length++; // reserve the slot before awaiting, so workers never overshoot
      out[slot] = await make();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return out;
}

function tollgateWaiting(baseUrl: string) {
  const client = new TollgateClient({ baseUrl });
  return async (): Promise<Waiting> => {
    const threadId = `resume-${crypto.randomUUID()}`;
    const events = await client.run(threadId, REFUND).collect();
    const interrupt = events.at(-1);
    if (interrupt?.type !== "interrupt") throw new Error(`tollgate: expected an interrupt, got ${interrupt?.type}`);
    return {
      threadId,
      async resume() {
        const start = nowUs();
        let first = 0;
        const decisions = interrupt.calls.map((c) => ({ call_id: c.call_id, approved: true }));
        for await (const e of client.resume(threadId, interrupt.interrupt_id, { decisions })) {
          first ||= nowUs();
          if (e.type === "error") throw new Error(`tollgate resume failed: ${e.message}`);
        }
        return (first - start) / 1000;
      },
    };
  };
}

interface WireMessage {
  type: string;
  tool_calls?: Array<{ id: string; name: string }>;
}

function peerWaiting(apiUrl: string) {
  const client = new Client({ apiUrl });
  return async (): Promise<Waiting> => {
    const { thread_id: threadId } = await client.threads.create();
    await client.runs.wait(threadId, "agent", { input: { messages: [{ role: "user", content: REFUND }] } });
    const state = await client.threads.getState<{ messages: WireMessage[] }>(threadId);
    if (!state.next.includes("call_tool")) throw new Error(`peer: expected to stop before call_tool, next = ${JSON.stringify(state.next)}`);
    const calls = state.values.messages.findLast((m) => m.type === "ai")?.tool_calls ?? [];
    const decisions = calls.map((c) => ({ call_id: c.id, approved: true }));
    return {
      threadId,
      async resume() {
        const start = nowUs();
        let first = 0;
        const stream = client.runs.stream(threadId, "agent", {
          input: null,
          config: { configurable: { decisions } },
          streamMode: ["updates", "custom"],
        });
        for await (const chunk of stream) {
          // The first frame is the server's own `metadata` (the run id), sent before the run starts.
          if (chunk.event !== "metadata") first ||= nowUs();
          if (chunk.event === "error") throw new Error(`peer resume failed: ${JSON.stringify(chunk.data)}`);
        }
        return (first - start) / 1000;
      },
    };
  };
}
