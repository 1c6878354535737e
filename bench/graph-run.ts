/**
 * `npx tsx bench/graph-run.ts [--runs 2000]`: what one run costs inside LangGraph alone, the
 * minimal reproduction behind docs/benchmarks.md's "Where a run's time goes". In one process, no HTTP
 * and no model server: tollgate's compiled graph on its SQLite checkpointer, a model that answers
 * at once (`FakeListChatModel`), one new thread per run, a one-word answer. Prints the mean wall
 * time per run for each variant, interleaved and repeated so machine noise hits all alike:
 * - `as shipped`: durability "exit", no RunTree per invocation (what src/tollgate.ts sets up);
 * - `durability async`: checkpoints written at every step (tollgate before issue 16);
 * - `with RunTrees`: @langchain/core's default, a langsmith RunTree per runnable invocation;
 * Run time is CPU time here: nothing waits on I/O.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { compileAgentGraph } from "../graphs/agent.js";
import { skipIdleRunTrees } from "../src/ops/index.js";
import { openSqliteStore } from "../src/store/index.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};

const provider = AsyncLocalStorageProviderSingleton as unknown as { runWithConfig: unknown };
const withRunTrees = provider.runWithConfig;
skipIdleRunTrees();
const withoutRunTrees = provider.runWithConfig;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-graph-run-"));
const store = await openSqliteStore(dir);
const graph = compileAgentGraph({ model: new FakeListChatModel({ responses: ["hello"] }), tools: [] }, store.checkpointer);

interface Variant {
  name: string;
  durability: "exit" | "async";
  runTrees: boolean;
}
const variants: Variant[] = [
  { name: "as shipped (durability exit, no RunTrees)", durability: "exit", runTrees: false },
  { name: "durability async (a checkpoint every step)", durability: "async", runTrees: false },
  { name: "with a RunTree per invocation", durability: "exit", runTrees: true },
];

async function oneRun(v: Variant): Promise<void> {
  provider.runWithConfig = v.runTrees ? withRunTrees : withoutRunTrees;
  const input = { messages: [new HumanMessage({ id: randomUUID(), content: "hi" })], rounds: 0, closed: false };
  const stream = await graph.stream(input, { configurable: { thread_id: randomUUID() }, streamMode: ["updates", "values"], durability: v.durability });
  for await (const _ of stream);
}

const runs = Number(arg("runs", "2000"));
const reps = 10;
const totals = new Map<string, number[]>();
for (const v of variants) for (let i = 0; i < 200; i++) await oneRun(v); // JIT, statement caches
for (let rep = 0; rep < reps; rep++) {
  for (const v of rep % 2 ? [...variants].reverse() : variants) {
    const start = performance.now();
    for (let i = 0; i < runs / reps; i++) await oneRun(v);
    const perRun = ((performance.now() - start) * 1000) / (runs / reps);
    totals.set(v.name, [...(totals.get(v.name) ?? []), perRun]);
  }
}
for (const [name, xs] of totals) {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  process.stdout.write(`${name.padEnd(46)} ${mean.toFixed(0).padStart(6)} µs per run (${xs.map((x) => x.toFixed(0)).join(", ")})\n`);
}
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
