/**
 * Figures 1 and 2: time to first token, token events per second and completed runs per second
 * at each concurrency, the model streaming as fast as it can. Each point runs every server in
 * turn (in a rotating order), `reps` times. In the windows of the most streams (200; quick 50)
 * the server's health endpoint is fetched every ~20 ms and its event-loop lag read from inside
 * it (window-probes.ts): what everyone else waits for while it streams.
 */
import { type BenchContext, type Row, rotate } from "../context.js";
import { directive } from "../directive.js";
import { closedLoop, type LoadWindow, untilIdle } from "../load.js";
import { dist } from "../stats.js";
import { TARGETS, type TargetName } from "../targets.js";
import { type WindowProbes, type WindowReading, windowProbes } from "../window-probes.js";

/** Streams each server actually runs at once at `c` streams: PEER runs at most `peerJobs`, the rest wait in its queue. */
export const runningAtOnce = (c: number, peerJobs: number): Record<TargetName, number> => ({ floor: c, tollgate: c, peer: Math.min(c, peerJobs) });

/** A remark beside PEER's value when its jobs are fewer than the streams. */
export const peerQueueRemark = (c: number, peerJobs: number): Row["remark"] => (peerJobs < c ? { peer: `${peerJobs} at a time` } : undefined);

export async function streamingSuite(ctx: BenchContext): Promise<Row[]> {
  const s = ctx.settings.streaming;
  const message = () => directive({ tokens: s.tokens, firstGap: s.firstGapMs });
  for (const name of TARGETS) {
    ctx.focus(name);
    await closedLoop(ctx.targets[name], 8, s.warmupMs, message); // JIT, pools, first-run setup
    await untilIdle(ctx.targets[name]);
  }
  const rows: Row[] = [];
  const peak = Math.max(...s.concurrencies);
  for (const c of s.concurrencies) {
    const windows: Record<TargetName, LoadWindow[]> = { floor: [], tollgate: [], peer: [] };
    const probed: Record<TargetName, WindowReading[]> = { floor: [], tollgate: [], peer: [] };
    for (let rep = 0; rep < s.reps; rep++) {
      for (const name of rotate(TARGETS, rep + c)) {
        ctx.focus(name);
        const target = ctx.targets[name];
        // Started before the load: its connection is open and warm when the window opens.
        let probes: WindowProbes | undefined;
        try {
          if (c === peak) probes = await windowProbes(target).catch((err: unknown) => void ctx.log(`  ${name} @${c}: no /healthz prober: ${String(err)}`));
          const w = await closedLoop(target, c, s.windowMs, message, {
            rampMs: s.rampMs,
            drainMs: s.drainMs,
            watch: { model: () => ctx.model.cpuSeconds() },
            onOpen: probes?.open,
            onClose: probes?.close,
          });
          windows[name].push(w);
          const reading = await probes?.result().catch((err: unknown) => void ctx.log(`  ${name} @${c}: no /healthz or loop-lag reading: ${String(err)}`));
          if (reading) probed[name].push(reading);
          await untilIdle(target);
          const cpu = Object.entries(w.cpu).map(([k, v]) => `${k} ${(v / (s.windowMs / 1000)).toFixed(2)}`).join(" ");
          const seen = reading ? `, /healthz p99 ${dist(reading.health.ms).p99.toFixed(1)} ms, loop lag p99 ${servingLag(reading)?.p99?.toFixed(1) ?? "–"} ms` : "";
          ctx.log(`  ${name} @${c}: ${w.tokensPerSec.toFixed(0)} tok/s, ${w.runsPerSec.toFixed(1)} runs/s, ttft p50 ${dist(w.ttftMs).p50.toFixed(2)} ms${seen}, cores used: ${cpu}${w.cut ? `, ${w.cut} cut after the drain` : ""}${w.errors ? `, ${w.errors} errors (${w.firstError})` : ""}`);
        } finally {
          probes?.kill();
        }
      }
    }
    rows.push(...pointRows(c, windows, s.tokens, ctx.settings.peerJobs));
    if (c === peak) rows.push(...probedRows(c, probed, ctx.settings.peerJobs, Object.fromEntries(TARGETS.map((t) => [t, ctx.targets[t].healthPath]))));
  }
  return rows;
}

function pointRows(c: number, windows: Record<TargetName, LoadWindow[]>, tokens: number, peerJobs: number): Row[] {
  const per = (f: (ws: LoadWindow[]) => number) => Object.fromEntries(TARGETS.map((t) => [t, f(windows[t])])) as Record<TargetName, number>;
  const ttft = (p: "p50" | "p99") => per((ws) => dist(ws.flatMap((w) => w.ttftMs))[p]);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const concurrent_runs = runningAtOnce(c, peerJobs);
  const remark = peerQueueRemark(c, peerJobs);
  const detail = {
    concurrent_runs,
    tokens_per_run: tokens,
    runs: per((ws) => ws.reduce((n, w) => n + w.runs.length, 0)),
    errors: per((ws) => ws.reduce((n, w) => n + w.errors, 0)),
    cut_after_drain: per((ws) => ws.reduce((n, w) => n + w.cut, 0)),
    first_error: Object.fromEntries(TARGETS.map((t) => [t, windows[t].find((w) => w.firstError)?.firstError ?? null])),
    tokens_per_sec_each_rep: Object.fromEntries(TARGETS.map((t) => [t, windows[t].map((w) => Math.round(w.tokensPerSec))])),
    cores_used_each_rep: Object.fromEntries(TARGETS.map((t) => [t, windows[t].map((w) => Object.fromEntries(Object.entries(w.cpu).map(([k, v]) => [k, +(v / (w.windowMs / 1000)).toFixed(2)])))])),
  };
  const streams = `${c} stream${c === 1 ? "" : "s"}`;
  const p50: Row = { group: "streaming", figure: `TTFT p50, ${streams}`, unit: "ms", better: "lower", values: ttft("p50"), remark, detail };
  const p99: Row = { group: "streaming", figure: `TTFT p99, ${streams}`, unit: "ms", better: "lower", values: ttft("p99"), remark, detail: { concurrent_runs } };
  const tokensPerSec: Row = { group: "streaming", figure: `token events/s, ${streams}`, unit: "1/s", better: "higher", values: per((ws) => mean(ws.map((w) => w.tokensPerSec))), remark, detail: { concurrent_runs } };
  const runsPerSec: Row = { group: "streaming", figure: `completed runs/s, ${streams}`, unit: "1/s", better: "higher", values: per((ws) => mean(ws.map((w) => w.runsPerSec))), remark, detail: { concurrent_runs } };
  if (c === 1) {
    const v = p50.values;
    p50.target = { text: "≤ FLOOR + 1 ms", met: v.tollgate! <= v.floor! + 1 };
  }
  if (c === 200) {
    const v = tokensPerSec.values;
    tokensPerSec.target = { text: "≥ 2× PEER, ≥ 0.8× FLOOR", met: v.tollgate! >= 2 * v.peer! && v.tollgate! >= 0.8 * v.floor! };
  }
  // CPU per token is what the server would cost on a machine of its own, where the model and
  // the load generator do not compete with it for the two cores.
  const cpuPerToken: Row = {
    group: "streaming",
    figure: `server CPU per token event, ${streams}`,
    unit: "µs",
    better: "lower",
    values: per((ws) => (1e6 * ws.reduce((a, w) => a + w.cpu.server!, 0)) / ws.reduce((a, w) => a + w.tokensPerSec * (w.windowMs / 1000), 0)),
    remark,
    detail: { concurrent_runs },
  };
  return [p50, p99, tokensPerSec, runsPerSec, cpuPerToken];
}

/** The event-loop lag of the process serving HTTP (PEER: the API server, not the CLI or tsx's watcher). */
function servingLag(r: WindowReading) {
  return r.lag?.serving ? r.lag.byPid[r.lag.serving] : undefined;
}

/**
 * "N samples" beside a value taken from fewer than 20 (a server whose event loop turns slowly
 * answers few GETs, and its loop-delay timer fires once per turn: the p99 is then the worst of
 * those few).
 */
function fewSamples(samples: Record<TargetName, number>, remark: Row["remark"]): Row["remark"] {
  const out = { ...remark };
  for (const t of TARGETS) if (samples[t] < 20) out[t] = [out[t], `${samples[t]} sample${samples[t] === 1 ? "" : "s"}`].filter(Boolean).join(", ");
  return Object.keys(out).length ? out : undefined;
}

/**
 * /healthz round trips pooled over the repetitions; the loop lag's p99 is the worst
 * repetition's (each process's histogram is read per window and cannot be pooled).
 */
function probedRows(c: number, probed: Record<TargetName, WindowReading[]>, peerJobs: number, paths: Record<string, string>): Row[] {
  const concurrent_runs = runningAtOnce(c, peerJobs);
  const remark = peerQueueRemark(c, peerJobs);
  const health = Object.fromEntries(TARGETS.map((t) => [t, dist(probed[t].flatMap((r) => r.health.ms))])) as Record<TargetName, ReturnType<typeof dist>>;
  const pick = (f: (t: TargetName) => number) => Object.fromEntries(TARGETS.map((t) => [t, f(t)])) as Record<TargetName, number>;
  const worst = (xs: Array<number | null | undefined>) => (xs.length && xs.every((x) => typeof x === "number") ? Math.max(...(xs as number[])) : Number.NaN);
  const streams = `while ${c} streams run`;
  const healthP50: Row = {
    group: "streaming",
    figure: `/healthz p50 ${streams}`,
    unit: "ms",
    better: "lower",
    values: pick((t) => health[t].p50),
    remark: fewSamples(pick((t) => health[t].n), remark),
    detail: {
      concurrent_runs,
      path: paths,
      every_ms: 20,
      samples: pick((t) => health[t].n),
      max_ms: pick((t) => health[t].max),
      errors: pick((t) => probed[t].reduce((n, r) => n + r.health.errors, 0)),
      first_error: Object.fromEntries(TARGETS.map((t) => [t, probed[t].find((r) => r.health.firstError)?.health.firstError ?? null])),
      prober_connections_each_rep: Object.fromEntries(TARGETS.map((t) => [t, probed[t].map((r) => r.health.connections)])),
    },
  };
  const healthP99: Row = { ...healthP50, figure: `/healthz p99 ${streams}`, values: pick((t) => health[t].p99), detail: { concurrent_runs } };
  healthP99.target = { text: "≤ 50 ms", met: healthP99.values.tollgate! <= 50 };
  const lag: Row = {
    group: "streaming",
    figure: `event-loop lag p99 ${streams}`,
    unit: "ms",
    better: "lower",
    values: pick((t) => worst(probed[t].map((r) => servingLag(r)?.p99))),
    remark: fewSamples(pick((t) => Math.min(...probed[t].map((r) => servingLag(r)?.samples ?? 0))), remark),
    detail: {
      concurrent_runs,
      resolution_ms: 10,
      which: "the process listening on the server's port; the value is the worst repetition's p99",
      each_rep: Object.fromEntries(TARGETS.map((t) => [t, probed[t].map((r) => ({ serving: r.lag?.serving ?? null, missing: r.lag?.missing ?? [], by_pid: r.lag?.byPid ?? {} }))])),
    },
  };
  lag.target = { text: "≤ 20 ms", met: lag.values.tollgate! <= 20 };
  return [healthP50, healthP99, lag];
}
