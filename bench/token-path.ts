/**
 * `npx tsx bench/token-path.ts [--tokens 200] [--runs 400]`: what a token costs on each way out
 * of the graph, in one process (no HTTP, no model server): tollgate's compiled graph, a model that
 * streams `--tokens` one-character chunks at once, one new thread per run. Variants, interleaved:
 * - `writer`: the adapter's `customWriter` passed as `config.writer` (what the run engine does);
 * - `custom`: `streamMode` with "custom", tokens through LangGraph's queue and `adaptGraphStream`;
 * - `none`: no writer and no custom mode (the node's writes go nowhere): the floor.
 * Prints CPU µs per run and per token over `none`.
 */
import { randomUUID } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { MemorySaver } from "@langchain/langgraph";
import { compileAgentGraph } from "../graphs/agent.js";
import { adaptGraphStream, customWriter, type GraphChunk } from "../src/runs/start/adapter.js";
import { skipIdleRunTrees } from "../src/ops/index.js";
import { ToolRegistry } from "../src/tools/index.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const tokens = Number(arg("tokens", "200"));
const runs = Number(arg("runs", "400"));
skipIdleRunTrees();
const graph = compileAgentGraph({ model: new FakeListChatModel({ responses: ["x".repeat(tokens)] }), tools: [] }, new MemorySaver());
const registry = new ToolRegistry([]);
type Variant = "writer" | "custom" | "none";

async function oneRun(v: Variant): Promise<number> {
  let n = 0;
  const input = { messages: [new HumanMessage({ id: randomUUID(), content: "hi" })], rounds: 0, closed: false };
  const stream = graph._streamIterator(input, {
    configurable: { thread_id: randomUUID() },
    streamMode: v === "custom" ? ["updates", "values", "custom"] : ["updates", "values"],
    durability: "exit",
    ...(v === "writer" ? { writer: customWriter((e) => void (e.type === "token" && n++)) } : {}),
  });
  for await (const e of adaptGraphStream(stream as AsyncIterable<GraphChunk>, registry)) if (e.type === "token") n++;
  return n;
}

const variants: Variant[] = ["writer", "custom", "none"];
for (const v of variants) for (let i = 0; i < 50; i++) await oneRun(v);
for (const v of ["writer", "custom"] as const) {
  const got = await oneRun(v);
  if (got !== tokens) throw new Error(`${v}: ${got} token events, expected ${tokens}`);
}
const totals = new Map<Variant, number[]>();
const reps = 10;
for (let rep = 0; rep < reps; rep++) {
  for (const v of rep % 2 ? [...variants].reverse() : variants) {
    const start = process.cpuUsage();
    for (let i = 0; i < runs / reps; i++) await oneRun(v);
    const used = process.cpuUsage(start);
    totals.set(v, [...(totals.get(v) ?? []), (used.user + used.system) / (runs / reps)]);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const floor = median(totals.get("none")!);
for (const [v, xs] of totals) {
  const m = median(xs);
  process.stdout.write(`${v.padEnd(7)} ${m.toFixed(0).padStart(6)} µs CPU per run, ${((m - floor) / tokens).toFixed(2)} µs per token over none\n`);
}
