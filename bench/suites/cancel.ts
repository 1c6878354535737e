/**
 * Figure 5: cancel latency, from the cancel to the model server seeing its connection closed
 * (the moment the model stops spending), for a run whose model is mid-answer (one token sent,
 * then holding). Two ways to cancel:
 * - `api`: `POST …/cancel` (TOLLGATE) / `POST …/runs/:run_id/cancel` (PEER), timed from sending it;
 * - `disconnect`: the client drops the stream (FLOOR, TOLLGATE, PEER with on_disconnect=cancel),
 *   timed from the drop.
 * Cancels run one at a time, the servers alternating in blocks.
 */
import http from "node:http";
import { Client } from "@langchain/langgraph-sdk";
import { TollgateClient } from "../../src/client/index.js";
import { nowUs } from "../clock.js";
import { type BenchContext, type Row, rotate } from "../context.js";
import { directive } from "../directive.js";
import { streamPost } from "../sse-client.js";
import { dist } from "../stats.js";
import type { Target, TargetName } from "../targets.js";

type Case = { name: TargetName; mode: "api" | "disconnect"; once: () => Promise<number> };

export async function cancelSuite(ctx: BenchContext): Promise<Row[]> {
  const { count, block } = ctx.settings.cancel;
  const closed = modelClosed(ctx.model.url);
  const agent = new http.Agent({ keepAlive: true });
  const t = ctx.targets;
  const cases: Case[] = [
    { name: "tollgate", mode: "api", once: () => tollgateApi(t.tollgate.child.url, closed) },
    { name: "peer", mode: "api", once: () => peerApi(t.peer.child.url, closed) },
    ...(["floor", "tollgate", "peer"] as const).map((name): Case => ({ name, mode: "disconnect", once: () => disconnect(t[name], agent, closed) })),
  ];
  const samples = new Map<Case, number[]>(cases.map((c) => [c, []]));
  const failures = new Map<Case, number>(cases.map((c) => [c, 0]));
  for (let i = 0; i < count; i += block) {
    for (const c of rotate(cases, i / block)) {
      ctx.focus(c.name);
      for (let k = i; k < Math.min(count, i + block); k++) {
        const ms = await c.once();
        if (Number.isFinite(ms)) samples.get(c)!.push(ms);
        else failures.set(c, failures.get(c)! + 1);
      }
    }
  }
  agent.destroy();
  const rows: Row[] = [];
  for (const mode of ["api", "disconnect"] as const) {
    const of = cases.filter((c) => c.mode === mode);
    const d = new Map(of.map((c) => [c.name, dist(samples.get(c)!)]));
    const label = mode === "api" ? "cancel (POST …/cancel) → model connection closed" : "client disconnect → model connection closed";
    const pick = (p: "p50" | "p99") => Object.fromEntries([...d].map(([n, x]) => [n, x[p]]));
    ctx.log(`  ${mode}: ${[...d].map(([n, x]) => `${n} p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)} ms`).join(", ")}`);
    const detail = { cancels: Object.fromEntries(of.map((c) => [c.name, samples.get(c)!.length])), not_closed_within_5s: Object.fromEntries(of.map((c) => [c.name, failures.get(c)])) };
    const p99: Row = { group: "cancel", figure: `${label} p99`, unit: "ms", better: "lower", values: pick("p99") };
    if (mode === "api") p99.target = { text: "≤ 50 ms", met: p99.values.tollgate! <= 50 };
    rows.push({ group: "cancel", figure: `${label} p50`, unit: "ms", better: "lower", values: pick("p50"), detail }, p99);
  }
  return rows;
}

/** Model request id → when the model server saw its client go; NaN if not within 5 s. */
function modelClosed(modelUrl: string) {
  return async (id: string): Promise<number> => {
    const res = await fetch(`${modelUrl}/_bench/closed/${encodeURIComponent(id)}`);
    const { closedAt } = (await res.json()) as { closedAt: number | null };
    return closedAt ?? Number.NaN;
  };
}

const hang = (id: string) => directive({ mode: "hang", tokens: 1, id });

async function tollgateApi(baseUrl: string, closed: (id: string) => Promise<number>): Promise<number> {
  const client = new TollgateClient({ baseUrl });
  const id = crypto.randomUUID();
  const threadId = `cancel-${id}`;
  const events = client.run(threadId, hang(id))[Symbol.asyncIterator]();
  const first = await events.next();
  if (first.done || first.value.type !== "token") throw new Error(`tollgate: expected a token first, got ${JSON.stringify(first.value)}`);
  const start = nowUs();
  await client.cancel(threadId);
  const at = await closed(id);
  while (!(await events.next()).done); // the `cancelled` event ends the stream
  return (at - start) / 1000;
}

async function peerApi(apiUrl: string, closed: (id: string) => Promise<number>): Promise<number> {
  const client = new Client({ apiUrl });
  const id = crypto.randomUUID();
  const threadId = crypto.randomUUID();
  const events = client.runs.stream(threadId, "agent", {
    input: { messages: [{ role: "user", content: hang(id) }] },
    streamMode: ["custom"],
    ifNotExists: "create",
  })[Symbol.asyncIterator]();
  let runId: string | undefined;
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error("peer: the stream ended before its first token");
    if (next.value.event === "metadata") runId = (next.value.data as { run_id: string }).run_id;
    if (next.value.event === "custom") break;
  }
  const start = nowUs();
  await client.runs.cancel(threadId, runId!);
  const at = await closed(id);
  while (!(await events.next()).done);
  return (at - start) / 1000;
}

async function disconnect(target: Target, agent: http.Agent, closed: (id: string) => Promise<number>): Promise<number> {
  const id = crypto.randomUUID();
  const drop = new AbortController();
  const req = target.streamRequest(hang(id));
  let start = 0;
  await streamPost(target.child.url + req.path, req.body, {
    agent,
    tokenEvent: target.tokenEvent,
    signal: drop.signal,
    onFirstToken: (at) => {
      start = at;
      drop.abort();
    },
    timeoutMs: 30_000,
  });
  if (!start) return Number.NaN;
  return ((await closed(id)) - start) / 1000;
}
