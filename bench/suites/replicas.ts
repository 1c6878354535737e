/**
 * Replicas on a shared PostgreSQL: completed runs per second and time to first token with one
 * and two server processes on one database, next to the default SQLite; the cancel sent to one
 * replica for a run on the other, timed until the model server sees its connection close.
 *
 * One throwaway cluster (test/helpers/postgres.ts) for the suite, a fresh database for each
 * configuration; each configuration's processes (`src/main.ts`, on the bench's model) are
 * started fresh, warmed, measured and killed before the next one starts, in a rotating order,
 * `reps` times. Without PostgreSQL's server binaries the suite says why and has no rows.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { TollgateClient } from "../../src/client/index.js";
import { pgChannel } from "../../src/store/postgres/replica-bus.js";
import { type PgCluster, postgresAvailable, startPostgres } from "../../test/helpers/postgres.js";
import { nowUs } from "../clock.js";
import { type BenchContext, type Row, rotate } from "../context.js";
import { directive } from "../directive.js";
import { closedLoop, type LoadWindow, untilIdle } from "../load.js";
import { type Child, listeningLine, startChild, tsxArgs } from "../processes.js";
import { dist } from "../stats.js";
import type { Target } from "../targets.js";

type ConfigKey = "sqlite" | "pg1" | "pg2";

interface Config {
  key: ConfigKey;
  /** How the figure names it. */
  label: string;
  replicas: number;
  postgres: boolean;
}

const CONFIGS: readonly Config[] = [
  { key: "sqlite", label: "SQLite", replicas: 1, postgres: false },
  { key: "pg1", label: "PostgreSQL ×1", replicas: 1, postgres: true },
  { key: "pg2", label: "PostgreSQL ×2", replicas: 2, postgres: true },
];

/** Unmeasured cancels before the measured ones: the cancel path's first calls (JIT, the bus's listeners). */
const CANCEL_WARMUP = 3;
/** The model server answers `/_bench/closed/<id>` with null after 5 s. */
const NOT_CLOSED = Number.NaN;

/** Everything measured on one configuration, over all repetitions. */
interface Measured {
  windows: LoadWindow[];
  /** cancel → model connection closed, ms. */
  cancelMs: number[];
  /** Cancels whose model connection did not close within 5 s. */
  notClosed: number;
  /** cancel sent → the bench's own listener got the `cancel` notice, ms (cross-replica only). */
  noticeMs: number[];
  /** that notice → model connection closed, ms: the running replica's part. */
  afterNoticeMs: number[];
  /** cancel sent → its answer (the cancelling replica waits for the run's end), ms. */
  answerMs: number[];
  /** The bench's own NOTIFY → LISTEN round trip on the configuration's database, ms. */
  notifyMs: number[];
}

export async function replicasSuite(ctx: BenchContext): Promise<Row[]> {
  ctx.focus(null); // nothing else runs while replicas are measured
  const avail = postgresAvailable();
  if (!avail.ok) {
    ctx.log(`  skipped: no PostgreSQL: ${avail.why}`);
    return [];
  }
  const s = ctx.settings.replicas;
  const cluster = await startPostgres();
  const postmaster = postmasterPid(cluster);
  const out = new Map<ConfigKey, Measured>(CONFIGS.map((c) => [c.key, { windows: [], cancelMs: [], notClosed: 0, noticeMs: [], afterNoticeMs: [], answerMs: [], notifyMs: [] }]));
  try {
    for (let rep = 0; rep < s.reps; rep++) {
      for (const config of rotate(CONFIGS, rep)) await measure(ctx, cluster, postmaster, config, rep, out.get(config.key)!);
    }
  } finally {
    await cluster.stop();
  }
  return rows(ctx, out);
}

/** One configuration, started fresh: warm-up, the load window, then the cancels one at a time. */
async function measure(ctx: BenchContext, cluster: PgCluster, postmaster: number | undefined, config: Config, rep: number, m: Measured): Promise<void> {
  const s = ctx.settings.replicas;
  const databaseUrl = config.postgres ? await cluster.createDatabase() : undefined;
  const dirs: string[] = [];
  const replicas: Child[] = [];
  try {
    // At once, as replicas are deployed: the schema is migrated under an advisory lock.
    for (let i = 0; i < config.replicas; i++) dirs.push(fs.mkdtempSync(path.join(os.tmpdir(), `tollgate-bench-${config.key}-`)));
    const started = await Promise.allSettled(dirs.map((dir, i) => startReplica(ctx.model.url, `${config.key}-${i}`, dir, databaseUrl)));
    for (const r of started) if (r.status === "fulfilled") replicas.push(r.value);
    for (const r of started) if (r.status === "rejected") throw r.reason;
    const target = spread(replicas);
    const message = () => directive({ tokens: s.tokens, firstGap: s.firstGapMs });
    const watch: Record<string, () => number> = { model: () => ctx.model.cpuSeconds() };
    if (postmaster !== undefined && config.postgres) watch.postgres = () => clusterCpu(postmaster);
    await closedLoop(target, 8, s.warmupMs, message); // JIT, pool connections, first-run setup
    await untilIdle(target);
    const w = await closedLoop(target, s.concurrency, s.windowMs, message, { rampMs: s.rampMs, drainMs: s.drainMs, watch });
    m.windows.push(w);
    await untilIdle(target);
    const cores = Object.entries(w.cpu).map(([k, v]) => `${k} ${(v / (s.windowMs / 1000)).toFixed(2)}`).join(" ");
    ctx.log(`  ${config.label} @${s.concurrency}: ${w.runsPerSec.toFixed(1)} runs/s, ttft p50 ${dist(w.ttftMs).p50.toFixed(2)} p99 ${dist(w.ttftMs).p99.toFixed(2)} ms, cores used: ${cores}${w.cut ? `, ${w.cut} cut after the drain` : ""}${w.errors ? `, ${w.errors} errors (${w.firstError})` : ""}`);

    // Cancels: on two replicas the run starts on one and the cancel goes to the other (turn about).
    const count = Math.ceil(s.cancels / s.reps);
    // Only a cancel for another replica's run goes through the database; a local one is a call.
    const cross = databaseUrl !== undefined && config.replicas > 1;
    const listener = cross ? await cancelNotices(databaseUrl) : undefined;
    try {
      for (let i = 0; i < CANCEL_WARMUP + count; i++) {
        const runOn = replicas[i % replicas.length]!;
        const cancelOn = replicas[(i + 1) % replicas.length]!;
        const r = await cancelOnce(ctx.model.url, runOn.url, cancelOn.url, listener);
        if (i < CANCEL_WARMUP) continue;
        if (Number.isNaN(r.closedMs)) m.notClosed++;
        else m.cancelMs.push(r.closedMs);
        m.answerMs.push(r.answerMs);
        if (r.noticeMs !== undefined) m.noticeMs.push(r.noticeMs);
        if (r.noticeMs !== undefined && !Number.isNaN(r.closedMs)) m.afterNoticeMs.push(r.closedMs - r.noticeMs);
      }
      if (cross) m.notifyMs.push(...(await notifyRoundTrips(databaseUrl, count)));
    } finally {
      await listener?.close();
    }
    const d = dist(m.cancelMs.slice(-count));
    const how = config.replicas > 1 ? "cross-replica cancel" : "cancel";
    const pp = (xs: number[]) => `p50 ${dist(xs.slice(-count)).p50.toFixed(2)} p99 ${dist(xs.slice(-count)).p99.toFixed(2)} ms`;
    const notice = cross ? `; cancel → notice seen ${pp(m.noticeMs)}, notice → model closed ${pp(m.afterNoticeMs)}, NOTIFY round trip ${pp(m.notifyMs)}` : "";
    ctx.log(`  ${config.label} (rep ${rep + 1}): ${how} → model closed p50 ${d.p50.toFixed(2)} p99 ${d.p99.toFixed(2)} max ${d.max.toFixed(2)} ms${notice}`);
  } finally {
    for (const r of replicas) await r.kill();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

/** `src/main.ts` on the bench's model, on SQLite in `dataDir` or on `databaseUrl`. */
function startReplica(modelUrl: string, name: string, dataDir: string, databaseUrl: string | undefined): Promise<Child> {
  return startChild({
    name: `tollgate-${name}`,
    args: tsxArgs("src/main.ts"),
    env: {
      MODEL: "fake",
      OPENAI_API_KEY: "BENCH-KEY",
      OPENAI_BASE_URL: `${modelUrl}/v1`,
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    ready: listeningLine,
  });
}

/**
 * The replicas as one target: each run's POST goes to the next replica in turn (round robin,
 * as a load balancer would spread them); CPU, pause and kill cover them all.
 */
function spread(replicas: Child[]): Target {
  let next = 0;
  const child: Child = {
    name: replicas.map((r) => r.name).join("+"),
    url: "", // the requests below carry their replica's URL
    proc: replicas[0]!.proc,
    rss: () => replicas.reduce((n, r) => n + r.rss(), 0),
    cpuSeconds: () => replicas.reduce((n, r) => n + r.cpuSeconds(), 0),
    gc: () => replicas.forEach((r) => r.gc()),
    pause: () => replicas.forEach((r) => r.pause()),
    resume: () => replicas.forEach((r) => r.resume()),
    kill: async () => {
      for (const r of replicas) await r.kill();
    },
    output: () => replicas.map((r) => r.output()).join("\n"),
  };
  return {
    name: "tollgate",
    child,
    tokenEvent: "token",
    healthPath: "/healthz",
    streamRequest: (message) => ({
      path: `${replicas[next++ % replicas.length]!.url}/threads/${crypto.randomUUID()}/runs`,
      body: JSON.stringify({ message }),
    }),
  };
}

/** The cluster's postmaster, from its pid file. */
function postmasterPid(cluster: PgCluster): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(cluster.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * CPU seconds the database has used: the postmaster's own and its reaped children's, and its
 * live children's (backends, WAL writer, …). Each backend calls setsid(), so they are not in the
 * postmaster's process group: they are found by their parent.
 */
function clusterCpu(postmaster: number): number {
  let ticks = 0;
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command name: state, ppid, pgrp, …; utime, stime, cutime, cstime are 14–17 of stat.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pid) === postmaster) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      else if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // ended while we looked: its time is in the postmaster's reaped children's now
    }
  }
  return ticks / CLOCK_TICKS;
}

/**
 * The bench's own LISTEN on the replicas' `cancel` channel: every replica's listener gets the
 * same notice at the same commit, so when this one gets it is about when the running one does.
 */
async function cancelNotices(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "tollgate-bench" });
  await client.connect();
  const seen = new Map<string, number>();
  const waiters = new Map<string, (t: number) => void>();
  client.on("notification", (msg) => {
    const t = nowUs();
    const runId = (msg.payload ?? "").split("\t")[0]!;
    if (seen.has(runId)) return; // the cancelling replica sends it again at each wake-up
    seen.set(runId, t);
    waiters.get(runId)?.(t);
  });
  await client.query(`LISTEN ${pgChannel("cancel")}`);
  return {
    /** When the first `cancel` notice for `runId` arrived; undefined if none within `ms`. */
    async first(runId: string, ms = 1000): Promise<number | undefined> {
      const known = seen.get(runId);
      if (known !== undefined) return known;
      return new Promise<number | undefined>((resolve) => {
        const timer = setTimeout(() => (waiters.delete(runId), resolve(undefined)), ms);
        waiters.set(runId, (t) => (clearTimeout(timer), waiters.delete(runId), resolve(t)));
      });
    },
    close: () => client.end(),
  };
}

/** Model request id → when the model server saw its client go; NaN if not within 5 s. */
async function modelClosedAt(modelUrl: string, id: string): Promise<number> {
  const res = await fetch(`${modelUrl}/_bench/closed/${encodeURIComponent(id)}`);
  const { closedAt } = (await res.json()) as { closedAt: number | null };
  return closedAt ?? NOT_CLOSED;
}

const hang = (id: string) => directive({ mode: "hang", tokens: 1, id });

/**
 * A run on `runOn` whose model sends one token and holds; once the client has that token,
 * `POST …/cancel` to `cancelOn`, timed until the model server sees the connection close.
 */
async function cancelOnce(
  modelUrl: string,
  runOn: string,
  cancelOn: string,
  listener: Awaited<ReturnType<typeof cancelNotices>> | undefined,
): Promise<{ closedMs: number; answerMs: number; noticeMs?: number }> {
  const id = crypto.randomUUID();
  const threadId = `replicas-${id}`;
  const events = new TollgateClient({ baseUrl: runOn }).run(threadId, hang(id))[Symbol.asyncIterator]();
  const first = await events.next();
  if (first.done || first.value.type !== "token") throw new Error(`tollgate: expected a token first, got ${JSON.stringify(first.value)}`);
  const runId = first.value.run_id;
  const start = nowUs();
  const answered = new TollgateClient({ baseUrl: cancelOn }).cancel(threadId).then(() => nowUs());
  const noticed = listener?.first(runId);
  const [closedAt, answeredAt, noticedAt] = await Promise.all([modelClosedAt(modelUrl, id), answered, noticed]);
  while (!(await events.next()).done); // the `cancelled` event ends the stream
  return {
    closedMs: (closedAt - start) / 1000,
    answerMs: (answeredAt - start) / 1000,
    ...(noticedAt !== undefined ? { noticeMs: (noticedAt - start) / 1000 } : {}),
  };
}

/** `count` NOTIFYs from one of the bench's connections to another one LISTENing, on `databaseUrl`, one at a time. */
async function notifyRoundTrips(databaseUrl: string, count: number): Promise<number[]> {
  const listen = new pg.Client({ connectionString: databaseUrl, application_name: "tollgate-bench" });
  const send = new pg.Client({ connectionString: databaseUrl, application_name: "tollgate-bench" });
  await Promise.all([listen.connect(), send.connect()]);
  try {
    await listen.query("LISTEN tollgate_bench_ping");
    let arrived: ((t: number) => void) | undefined;
    listen.on("notification", () => arrived?.(nowUs()));
    const ms: number[] = [];
    for (let i = 0; i < count + CANCEL_WARMUP; i++) {
      const got = new Promise<number>((r) => (arrived = r));
      const start = nowUs();
      await send.query("SELECT pg_notify('tollgate_bench_ping', $1)", [String(i)]);
      const t = await got;
      if (i >= CANCEL_WARMUP) ms.push((t - start) / 1000);
    }
    return ms;
  } finally {
    await Promise.all([listen.end(), send.end()]);
  }
}

function rows(ctx: BenchContext, out: Map<ConfigKey, Measured>): Row[] {
  const s = ctx.settings.replicas;
  const streams = `${s.concurrency} streams`;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cores = (w: LoadWindow) => Object.fromEntries(Object.entries(w.cpu).map(([k, v]) => [k, +(v / (w.windowMs / 1000)).toFixed(2)]));
  const load: Row[] = [];
  const ttft: Row[] = [];
  for (const c of CONFIGS) {
    const m = out.get(c.key)!;
    const d = dist(m.windows.flatMap((w) => w.ttftMs));
    const detail = {
      configuration: c.key,
      replicas: c.replicas,
      store: c.postgres ? "postgres" : "sqlite",
      tokens_per_run: s.tokens,
      runs: m.windows.reduce((n, w) => n + w.runs.length, 0),
      errors: m.windows.reduce((n, w) => n + w.errors, 0),
      cut_after_drain: m.windows.reduce((n, w) => n + w.cut, 0),
      first_error: m.windows.find((w) => w.firstError)?.firstError ?? null,
      runs_per_sec_each_rep: m.windows.map((w) => +w.runsPerSec.toFixed(1)),
      cores_used_each_rep: m.windows.map(cores),
      server_cpu_ms_per_run: +((1000 * m.windows.reduce((a, w) => a + w.cpu.server!, 0)) / m.windows.reduce((a, w) => a + w.runsPerSec * (w.windowMs / 1000), 0)).toFixed(2),
      ...(c.postgres ? { postgres_cpu_ms_per_run: +((1000 * m.windows.reduce((a, w) => a + (w.cpu.postgres ?? Number.NaN), 0)) / m.windows.reduce((a, w) => a + w.runsPerSec * (w.windowMs / 1000), 0)).toFixed(2) } : {}),
    };
    load.push({ group: "replicas", figure: `completed runs/s, ${streams}, ${c.label}`, unit: "1/s", better: "higher", values: { tollgate: mean(m.windows.map((w) => w.runsPerSec)) }, detail });
    ttft.push(
      { group: "replicas", figure: `TTFT p50, ${streams}, ${c.label}`, unit: "ms", better: "lower", values: { tollgate: d.p50 } },
      { group: "replicas", figure: `TTFT p99, ${streams}, ${c.label}`, unit: "ms", better: "lower", values: { tollgate: d.p99 } },
    );
  }
  const cancel: Row[] = [];
  for (const c of CONFIGS) {
    const m = out.get(c.key)!;
    const d = dist(m.cancelMs);
    const label = c.replicas > 1 ? `cross-replica cancel (run on A, POST …/cancel to B) → model connection closed, ${c.label}` : `cancel (POST …/cancel, same replica) → model connection closed, ${c.label}`;
    const ms = (xs: number[]) => (xs.length ? { p50: +dist(xs).p50.toFixed(2), p99: +dist(xs).p99.toFixed(2), max: +dist(xs).max.toFixed(2) } : null);
    const detail = {
      cancels: m.cancelMs.length,
      not_closed_within_5s: m.notClosed,
      max_ms: +d.max.toFixed(2),
      cancel_answered_ms: ms(m.answerMs),
      cancel_notice_seen_ms: ms(m.noticeMs),
      notice_to_model_closed_ms: ms(m.afterNoticeMs),
    };
    const p99: Row = { group: "replicas", figure: `${label} p99`, unit: "ms", better: "lower", values: { tollgate: d.p99 } };
    if (c.replicas > 1) p99.target = { text: "≤ 100 ms", met: d.p99 <= 100 && m.notClosed === 0 };
    cancel.push({ group: "replicas", figure: `${label} p50`, unit: "ms", better: "lower", values: { tollgate: d.p50 }, detail }, p99);
  }
  // Of the cross-replica cancel: how long the database takes to pass one notice along, alone.
  const pg2 = out.get("pg2")!;
  const rt = dist(pg2.notifyMs);
  cancel.push(
    { group: "replicas", figure: "NOTIFY → LISTEN round trip (the bench's own connections, idle), PostgreSQL p50", unit: "ms", better: "lower", values: { tollgate: rt.p50 }, detail: { samples: rt.n, max_ms: +rt.max.toFixed(2) } },
    { group: "replicas", figure: "NOTIFY → LISTEN round trip (the bench's own connections, idle), PostgreSQL p99", unit: "ms", better: "lower", values: { tollgate: rt.p99 } },
  );
  return [...load, ...ttft, ...cancel];
}
