/**
 * Figure 7: memory. Fresh servers (nothing left over from the load suites), warmed up, idle
 * RSS taken; then threads are brought to the approval gate (the model asks for refund_order)
 * and left there, no connection held, RSS taken at each count; then streams are opened and
 * held (the model sends one token and waits) and RSS taken while they are open.
 * Each reading: a few quiet seconds, a full GC in every node process of the server (SIGUSR2,
 * see gc-on-signal.mjs), then the RSS of the whole process group (PEER: CLI, tsx and server).
 */
import { setMaxListeners } from "node:events";
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { BenchContext, Row } from "../context.js";
import { directive } from "../directive.js";
import { closedLoop } from "../load.js";
import { streamPost } from "../sse-client.js";
import { startFloor, startPeer, startTollgate, type Target, type TargetName, TARGETS } from "../targets.js";

const MB = 1024 * 1024;
const CREATE_CONCURRENCY = 16;

interface Memory {
  idle: number;
  waiting: Array<{ asked: number; reached: number; rss: number; seconds: number }>;
  open?: { asked: number; opened: number; before: number; rss: number };
}

export async function memorySuite(ctx: BenchContext): Promise<Row[]> {
  const url = ctx.model.url;
  const flags = { gcOnSignal: true };
  const [floor, tollgate, peer] = await Promise.all([startFloor(url, flags), startTollgate(url, flags), startPeer(url, ctx.settings.peerJobs, flags)]);
  const fresh: Record<TargetName, Target> = { floor, tollgate, peer };
  const out: Partial<Record<TargetName, Memory>> = {};
  try {
    for (const name of TARGETS) {
      for (const t of TARGETS) if (t !== name) fresh[t].child.pause();
      fresh[name].child.resume();
      out[name] = await measure(ctx, fresh[name], name === "floor" ? [] : ctx.settings.memory.waiting);
      await fresh[name].child.kill();
    }
  } finally {
    for (const t of TARGETS) await fresh[t].child.kill();
  }
  return rows(out, ctx.settings.memory.openStreams);
}

async function measure(ctx: BenchContext, target: Target, waiting: number[]): Promise<Memory> {
  const m = ctx.settings.memory;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const post = (message: string, o: { signal?: AbortSignal; onOpen?: () => void } = {}) => {
    const req = target.streamRequest(message);
    return streamPost(target.child.url + req.path, req.body, { agent, tokenEvent: target.tokenEvent, timeoutMs: 120_000, ...o });
  };
  const rss = async () => {
    await sleep(m.settleMs);
    for (let i = 0; i < 3; i++) {
      // Several rounds: V8 gives pages back to the OS over more than one collection.
      target.child.gc();
      await sleep(300);
    }
    return target.child.rss();
  };
  try {
    await closedLoop(target, 4, 1500, () => directive({ tokens: 16 }));
    if (waiting.length) for (let i = 0; i < 3; i++) await post(directive({ mode: "refund" }));
    const mem: Memory = { idle: await rss(), waiting: [] };
    ctx.log(`  ${target.name}: idle ${(mem.idle / MB).toFixed(1)} MB`);

    let made = 0;
    const deadline = Date.now() + m.creationBudgetMs;
    for (const asked of waiting) {
      const t0 = Date.now();
      let failed = 0;
      const worker = async () => {
        while (made < asked && Date.now() < deadline) {
          made++;
          const r = await post(directive({ mode: "refund" }));
          if (r.error || (target.name === "tollgate" && r.lastEvent !== "interrupt")) failed++;
        }
      };
      await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
      if (failed) throw new Error(`${target.name}: ${failed} runs did not stop at the gate`);
      const seconds = (Date.now() - t0) / 1000;
      mem.waiting.push({ asked, reached: made, rss: await rss(), seconds });
      ctx.log(`  ${target.name}: ${made} waiting threads (${seconds.toFixed(0)} s): +${((mem.waiting.at(-1)!.rss - mem.idle) / MB).toFixed(1)} MB`);
    }

    const before = await rss();
    const drop = new AbortController();
    setMaxListeners(0, drop.signal);
    let opened = 0;
    let allOpen!: () => void;
    const ready = new Promise<void>((r) => (allOpen = r));
    const streams = Array.from({ length: m.openStreams }, () =>
      post(directive({ mode: "hang", tokens: 1 }), { signal: drop.signal, onOpen: () => ++opened === m.openStreams && allOpen() }),
    );
    await Promise.race([ready, sleep(30_000)]);
    mem.open = { asked: m.openStreams, opened, before, rss: await rss() };
    ctx.log(`  ${target.name}: ${opened} open streams: +${((mem.open.rss - before) / MB).toFixed(1)} MB`);
    drop.abort();
    await Promise.all(streams);
    return mem;
  } finally {
    agent.destroy();
  }
}

function rows(out: Partial<Record<TargetName, Memory>>, openStreams: number): Row[] {
  const measured = Object.entries(out) as Array<[TargetName, Memory]>;
  const per = (f: (m: Memory) => number | undefined) =>
    Object.fromEntries(measured.map(([n, m]) => [n, f(m)]).filter(([, v]) => v !== undefined));
  const rs: Row[] = [{ group: "memory", figure: "RSS idle, after warm-up", unit: "MB", better: "lower", values: per((m) => m.idle / MB) }];
  (out.tollgate?.waiting ?? []).forEach(({ asked }, i) => {
    const row: Row = {
      group: "memory",
      figure: `RSS over idle, ${asked.toLocaleString("en-US")} thread${asked === 1 ? "" : "s"} waiting for approval`,
      unit: "MB",
      better: "lower",
      values: per((m) => (m.waiting[i] ? (m.waiting[i]!.rss - m.idle) / MB : undefined)),
      detail: { reached: per((m) => m.waiting[i]?.reached), seconds_to_create: per((m) => m.waiting[i]?.seconds) },
    };
    const short = measured.filter(([, m]) => m.waiting[i] && m.waiting[i]!.reached < asked);
    if (short.length) row.remark = Object.fromEntries(short.map(([n, m]) => [n, `only ${m.waiting[i]!.reached} made in the time budget`]));
    if (asked === 10_000) row.target = { text: "< 100 MB", met: (row.values.tollgate ?? Infinity) < 100 };
    rs.push(row);
  });
  const open: Row = {
    group: "memory",
    figure: `RSS increase with ${openStreams} open streams`,
    unit: "MB",
    better: "lower",
    values: per((m) => (m.open ? (m.open.rss - m.open.before) / MB : undefined)),
    detail: { opened: per((m) => m.open?.opened) },
  };
  const short = measured.filter(([, m]) => m.open && m.open.opened < m.open.asked);
  if (short.length) open.remark = Object.fromEntries(short.map(([n, m]) => [n, `${m.open!.opened} opened`]));
  rs.push(open);
  return rs;
}
