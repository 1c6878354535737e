/**
 * `npx tsx bench/run-cost.ts [--runs 2000] [--modes graph,service,http] [--profile service] [--count-sql]`:
 * the fixed cost of one run, in one process, sequentially: a model that answers one token at once
 * (`FakeListChatModel`), a new thread per run. Three layers, interleaved and repeated:
 * - `graph`: the compiled graph alone (`graph.stream`, durability exit), as bench/graph-run.ts;
 * - `service`: `RunService.startMessage` to `run.done` (claim, RunLog, executor, commitEnd);
 * - `http`: `POST /threads/:id/runs` through the Hono app (`app.request`), the SSE body read to its end.
 * With `--profile MODE`, a CPU profile of MODE alone (node:inspector) is written to
 * bench/results/profiles/run-cost-MODE.cpuprofile. With `--count-sql`, the SQL statements one
 * service run executes are counted and listed.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import inspector from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { ANONYMOUS } from "../src/auth/index.js";
import { loadConfig } from "../src/config.js";
import { silentLogger } from "../src/logger.js";
import { createTollgate } from "../src/index.js";
import { REPO_ROOT } from "./processes.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};

// Counting SQL (`--count-sql`): the statements' prototype, patched before any is prepared (the
// store binds `run` at prepare time).
const sqlCounts = new Map<string, number>();
const sqlTimes = new Map<string, number>();
const commitTimes: number[] = [];
let countingSql = false;
{
  const proto = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<string, Function>;
  for (const fn of ["run", "get", "all", "iterate"]) {
    const orig = proto[fn]!;
    proto[fn] = function (this: { source: string }, ...a: unknown[]) {
      if (!countingSql) return orig.apply(this, a);
      const k = `${fn} ${this.source.replace(/\s+/g, " ").trim().slice(0, 100)}`;
      sqlCounts.set(k, (sqlCounts.get(k) ?? 0) + 1);
      const t = process.hrtime.bigint();
      try {
        return orig.apply(this, a);
      } finally {
        const us = Number(process.hrtime.bigint() - t) / 1000;
        sqlTimes.set(k, (sqlTimes.get(k) ?? 0) + us);
        if (/COMMIT|INSERT OR REPLACE INTO checkpoints/.test(k)) commitTimes.push(us);
      }
    };
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-run-cost-"));
const config = loadConfig({ DATA_DIR: dataDir, MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY" });
const model = new FakeListChatModel({ responses: ["x"] });
const tg = await createTollgate({ config, log: silentLogger, model, processMetrics: false });
const graph = (tg as unknown as { runs: { ctx: { graphs: { fallback(): { graph: { stream: Function } } } } } }).runs.ctx.graphs.fallback().graph;

/** One message run through the HTTP app on a new thread: its SSE text, once it has ended `done`. */
async function runOverHttp(app: { app: { request(url: string, init: RequestInit): Response | Promise<Response> } }): Promise<string> {
  const res = await app.app.request(`/threads/${randomUUID()}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json", host: "127.0.0.1" },
    body: JSON.stringify({ message: "hi" }),
  });
  const text = await res.text();
  if (!text.includes("event: done")) throw new Error(`no done event: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

type Mode = "graph" | "service" | "http";
const ops: Record<Mode, () => Promise<void>> = {
  async graph() {
    const input = { messages: [new HumanMessage({ id: randomUUID(), content: "hi" })], rounds: 0, closed: false };
    const stream = await graph.stream(input, { configurable: { thread_id: randomUUID() }, streamMode: ["updates", "values"], durability: "exit" });
    for await (const _ of stream as AsyncIterable<unknown>);
  },
  async service() {
    const run = await tg.runs.startMessage(ANONYMOUS, { threadId: randomUUID(), message: "hi" });
    await run.done;
    if (run.outcome !== "completed") throw new Error(`run ended ${run.outcome}`);
  },
  async http() {
    await runOverHttp(tg);
  },
};

const runs = Number(arg("runs", "2000"));
const modes = arg("modes", "graph,service,http").split(",") as Mode[];
const reps = 10;
for (const m of modes) for (let i = 0; i < 200; i++) await ops[m](); // JIT, statement caches

if (process.argv.includes("--count-sql")) {
  const n = 500;
  countingSql = true;
  for (let i = 0; i < n; i++) await ops.service();
  countingSql = false;
  const rows = [...sqlCounts].sort((a, b) => b[1] - a[1]);
  process.stdout.write(`SQL statements per service run (${n} runs):\n`);
  for (const [k, c] of rows) process.stdout.write(`${(c / n).toFixed(2).padStart(6)}  ${((sqlTimes.get(k) ?? 0) / n).toFixed(0).padStart(5)} µs  ${k}\n`);
  commitTimes.sort((a, b) => a - b);
  const q = (f: number) => commitTimes[Math.floor(f * (commitTimes.length - 1))]!.toFixed(0);
  const slow = commitTimes.filter((x) => x > 1000);
  process.stdout.write(`commits (and autocommitted checkpoint inserts): p50 ${q(0.5)} µs, p90 ${q(0.9)}, p99 ${q(0.99)}, max ${q(1)}; ${slow.length} over 1 ms holding ${((100 * slow.reduce((a, b) => a + b, 0)) / commitTimes.reduce((a, b) => a + b, 0)).toFixed(0)}% of their time\n`);
  const allUs = [...sqlTimes.values()].reduce((a, b) => a + b, 0) / n;
  process.stdout.write(`${(rows.reduce((a, r) => a + r[1], 0) / n).toFixed(1)} statements, ${allUs.toFixed(0)} µs per run in all\n`);
  process.exit(0);
}

if (process.argv.includes("--io")) {
  // Bytes and write calls one run makes (SQLite's WAL appends, mostly): /proc/self/io.
  const io = () => Object.fromEntries(fs.readFileSync("/proc/self/io", "utf8").trim().split("\n").map((l) => l.split(": ")).map(([k, v]) => [k, Number(v)]));
  const n = 500;
  for (const m of modes) {
    const a = io();
    for (let i = 0; i < n; i++) await ops[m]();
    const b = io();
    process.stdout.write(`${m}: ${((b.wchar - a.wchar) / n).toFixed(0)} bytes written, ${((b.syscw - a.syscw) / n).toFixed(1)} write calls, ${((b.syscr - a.syscr) / n).toFixed(1)} read calls per run\n`);
  }
  process.exit(0);
}

if (process.argv.includes("--concurrent")) {
  // Many runs at once, each of `--tokens` tokens a timer tick apart, through the HTTP app: CPU per
  // token event and per run, and what was written, over `--total` runs (closed loop).
  const streams = Number(arg("concurrent", "200"));
  const total = Number(arg("total", "2000"));
  const k = Number(arg("tokens", "100"));
  const tokenModel = new FakeListChatModel({ responses: ["x".repeat(k)], sleep: 0 });
  const tg2 = await createTollgate({
    config: loadConfig({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-run-cost-")), MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY" }),
    log: silentLogger,
    model: tokenModel,
    processMetrics: false,
  });
  const one = async () => (await runOverHttp(tg2)).split("event: token").length - 1;
  const io = () => Object.fromEntries(fs.readFileSync("/proc/self/io", "utf8").trim().split("\n").map((l) => l.split(": ")).map(([key, v]) => [key, Number(v)]));
  const loop = async (n: number) => {
    let started = 0;
    let tokensSeen = 0;
    await Promise.all(Array.from({ length: streams }, async () => {
      while (started < n) {
        started++;
        const got = await one(); // not `tokensSeen += await one()`: that reads tokensSeen before the await
        tokensSeen += got;
      }
    }));
    return tokensSeen;
  };
  await loop(streams * 2); // warm-up
  const a = io();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const seen = await loop(total);
  const used = process.cpuUsage(cpu);
  const secs = (performance.now() - wall) / 1000;
  const b = io();
  const us = used.user + used.system;
  process.stdout.write(
    `${streams} at once, ${total} runs of ${k} tokens: ${(us / seen).toFixed(1)} µs CPU per token event (user ${(used.user / seen).toFixed(1)}, system ${(used.system / seen).toFixed(1)}), ${(us / total / 1000).toFixed(2)} ms per run, ` +
      `${(seen / secs).toFixed(0)} token events/s; written ${((b.wchar - a.wchar) / seen).toFixed(0)} B and ${((b.syscw - a.syscw) / seen).toFixed(2)} write calls per token event\n`,
  );
  await tg2.close();
  process.exit(0);
}

const profile = arg("profile", "");
if (profile) {
  const m = profile as Mode;
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const start = performance.now();
  for (let i = 0; i < runs; i++) await ops[m]();
  const perRun = ((performance.now() - start) * 1000) / runs;
  const { profile: p } = await session.post("Profiler.stop");
  const dir = path.join(REPO_ROOT, "bench/results/profiles");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `run-cost-${m}.cpuprofile`);
  fs.writeFileSync(file, JSON.stringify(p));
  process.stdout.write(`${m}: ${perRun.toFixed(0)} µs per run (profiled); ${file}\n`);
} else {
  const totals = new Map<Mode, number[]>();
  for (let rep = 0; rep < reps; rep++) {
    for (const m of rep % 2 ? [...modes].reverse() : modes) {
      // CPU time, not wall time: nothing here waits on I/O, and the machine is shared.
      const start = process.cpuUsage();
      for (let i = 0; i < runs / reps; i++) await ops[m]();
      const used = process.cpuUsage(start);
      totals.set(m, [...(totals.get(m) ?? []), (used.user + used.system) / (runs / reps)]);
    }
  }
  for (const [m, xs] of totals) {
    const sorted = [...xs].sort((a, b) => a - b);
    const med = (sorted[4]! + sorted[5]!) / 2;
    process.stdout.write(`${m.padEnd(8)} median ${med.toFixed(0).padStart(6)} µs CPU per run  (${xs.map((x) => x.toFixed(0)).join(", ")})\n`);
  }
}
await tg.close();
fs.rmSync(dataDir, { recursive: true, force: true });
