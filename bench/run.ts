/**
 * `npm run bench [-- --quick] [--peer-jobs N] [--only streaming,sdk,cancel,…]`: FLOOR, TOLLGATE and PEER side by side on one
 * fast model server, then tollgate's cost of length and everyone's memory. Prints the table and
 * writes bench/results/latest.{md,json} (quick runs: quick.{md,json}). Everything it starts runs
 * on 127.0.0.1 and is killed before it exits; a run past its deadline is stopped.
 */
import type { BenchContext, Row } from "./context.js";
import { markdown, machineInfo, type Results, writeResults } from "./report.js";
import { parseArgs } from "./settings.js";
import { cancelSuite } from "./suites/cancel.js";
import { checkpointSuite } from "./suites/checkpoints.js";
import { eventLogSuite } from "./suites/event-log.js";
import { memorySuite } from "./suites/memory.js";
import { replicasSuite } from "./suites/replicas.js";
import { resumeSuite } from "./suites/resume.js";
import { sdkSuite, sdkThreadSuite } from "./suites/sdk.js";
import { storageLockSuite } from "./suites/storage-lock.js";
import { streamingSuite } from "./suites/streaming.js";
import { tokenLatencySuite } from "./suites/token-latency.js";
import { startFloor, startModel, startPeer, startTollgate, TARGETS, type Target, type TargetName } from "./targets.js";

type Suite = (ctx: BenchContext) => Promise<Row[]>;

async function main(): Promise<number> {
  const settings = parseArgs(process.argv.slice(2));
  const deadline = setTimeout(() => {
    process.stderr.write(`bench: still running after ${settings.mode === "quick" ? 5 : 40} minutes; giving up\n`);
    process.exit(1); // the exit hook kills every process group we started
  }, (settings.mode === "quick" ? 5 : 40) * 60_000);
  deadline.unref();
  const t0 = Date.now();
  const log = (msg: string) => process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
  log(`mode ${settings.mode}; starting the model, FLOOR, TOLLGATE and PEER`);

  const model = await startModel();
  // loop-lag.mjs in each: the streaming suite reads their event-loop lag in its busiest windows.
  const flags = { loopLag: true };
  const [floor, tollgate, peer] = await Promise.all([startFloor(model.url, flags), startTollgate(model.url, flags), startPeer(model.url, settings.peerJobs, flags)]);
  const targets: Record<TargetName, Target> = { floor, tollgate, peer };
  const ctx: BenchContext = {
    settings,
    model,
    targets,
    log,
    focus(name) {
      for (const t of TARGETS) if (t !== name) targets[t].child.pause();
      if (name) targets[name].child.resume();
    },
  };

  const rows: Row[] = [];
  const failures: Results["failures"] = [];
  // `fullOnly`: left out of a quick run unless `--only` names it (the quick run's ~2 minutes are spent).
  const run = async (key: string, name: string, suite: Suite, o: { fullOnly?: boolean } = {}) => {
    if (settings.only ? !settings.only.includes(key) : o.fullOnly && settings.mode === "quick") return;
    log(`${name}`);
    try {
      rows.push(...(await suite(ctx)));
    } catch (err) {
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`${name} FAILED: ${error}`);
      failures.push({ suite: name, error });
    }
  };
  await run("streaming", "streaming: TTFT and throughput", streamingSuite);
  // The SDK against /langgraph is already driven by the tests (test/e2e/langgraph-sdk.test.ts); the
  // quick run has no time left for a second set of load windows, so only the full run measures it.
  await run("sdk", "LangGraph SDK: messages-tuple on TOLLGATE's /langgraph and PEER", sdkSuite, { fullOnly: true });
  await run("sdk-thread", "LangGraph SDK: ThreadStream (thread-centric protocol) on TOLLGATE's /langgraph and PEER", sdkThreadSuite, { fullOnly: true });
  await run("latency", "token latency", tokenLatencySuite);
  await run("resume", "resume latency", resumeSuite);
  await run("cancel", "cancel latency", cancelSuite);
  for (const t of TARGETS) await targets[t].child.kill();
  await run("checkpoints", "cost of length (checkpoints)", checkpointSuite);
  await run("eventlog", "run event log", eventLogSuite);
  await run("lock", "a write lock held by another process", storageLockSuite);
  await run("memory", "memory (fresh servers)", memorySuite);
  await run("replicas", "replicas: SQLite, PostgreSQL ×1 and ×2", replicasSuite);
  await model.kill();

  const results: Results = { machine: machineInfo(), settings, duration_s: (Date.now() - t0) / 1000, rows, failures };
  const files = writeResults(results);
  process.stdout.write(`\n${markdown(results)}\n`);
  log(`wrote ${files.md} and ${files.json}`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
