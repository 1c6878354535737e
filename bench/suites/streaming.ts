/**
 * Figures 1 and 2: time to first token, token events per second and completed runs per second
 * at each concurrency, the model streaming as fast as it can. Each point runs every server in
 * turn (in a rotating order), `reps` times.
 */
import { type BenchContext, type Row, rotate } from "../context.js";
import { directive } from "../directive.js";
import { closedLoop, type LoadWindow, untilIdle } from "../load.js";
import { dist } from "../stats.js";
import { TARGETS, type TargetName } from "../targets.js";

export async function streamingSuite(ctx: BenchContext): Promise<Row[]> {
  const s = ctx.settings.streaming;
  const message = () => directive({ tokens: s.tokens, firstGap: s.firstGapMs });
  for (const name of TARGETS) {
    ctx.focus(name);
    await closedLoop(ctx.targets[name], 8, s.warmupMs, message); // JIT, pools, first-run setup
    await untilIdle(ctx.targets[name]);
  }
  const rows: Row[] = [];
  for (const c of s.concurrencies) {
    const windows: Record<TargetName, LoadWindow[]> = { floor: [], tollgate: [], peer: [] };
    for (let rep = 0; rep < s.reps; rep++) {
      for (const name of rotate(TARGETS, rep + c)) {
        ctx.focus(name);
        const w = await closedLoop(ctx.targets[name], c, s.windowMs, message, { rampMs: s.rampMs, drainMs: s.drainMs, watch: { model: () => ctx.model.cpuSeconds() } });
        windows[name].push(w);
        await untilIdle(ctx.targets[name]);
        const cpu = Object.entries(w.cpu).map(([k, v]) => `${k} ${(v / (s.windowMs / 1000)).toFixed(2)}`).join(" ");
        ctx.log(`  ${name} @${c}: ${w.tokensPerSec.toFixed(0)} tok/s, ${w.runsPerSec.toFixed(1)} runs/s, ttft p50 ${dist(w.ttftMs).p50.toFixed(2)} ms, cores used: ${cpu}${w.cut ? `, ${w.cut} cut after the drain` : ""}${w.errors ? `, ${w.errors} errors (${w.firstError})` : ""}`);
      }
    }
    rows.push(...pointRows(c, windows, s.tokens));
  }
  return rows;
}

function pointRows(c: number, windows: Record<TargetName, LoadWindow[]>, tokens: number): Row[] {
  const per = (f: (ws: LoadWindow[]) => number) => Object.fromEntries(TARGETS.map((t) => [t, f(windows[t])])) as Record<TargetName, number>;
  const ttft = (p: "p50" | "p99") => per((ws) => dist(ws.flatMap((w) => w.ttftMs))[p]);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const detail = {
    tokens_per_run: tokens,
    runs: per((ws) => ws.reduce((n, w) => n + w.runs.length, 0)),
    errors: per((ws) => ws.reduce((n, w) => n + w.errors, 0)),
    cut_after_drain: per((ws) => ws.reduce((n, w) => n + w.cut, 0)),
    first_error: Object.fromEntries(TARGETS.map((t) => [t, windows[t].find((w) => w.firstError)?.firstError ?? null])),
    tokens_per_sec_each_rep: Object.fromEntries(TARGETS.map((t) => [t, windows[t].map((w) => Math.round(w.tokensPerSec))])),
    cores_used_each_rep: Object.fromEntries(TARGETS.map((t) => [t, windows[t].map((w) => Object.fromEntries(Object.entries(w.cpu).map(([k, v]) => [k, +(v / (w.windowMs / 1000)).toFixed(2)])))])),
  };
  const streams = `${c} stream${c === 1 ? "" : "s"}`;
  const p50: Row = { group: "streaming", figure: `TTFT p50, ${streams}`, unit: "ms", better: "lower", values: ttft("p50"), detail };
  const p99: Row = { group: "streaming", figure: `TTFT p99, ${streams}`, unit: "ms", better: "lower", values: ttft("p99") };
  const tokensPerSec: Row = { group: "streaming", figure: `token events/s, ${streams}`, unit: "1/s", better: "higher", values: per((ws) => mean(ws.map((w) => w.tokensPerSec))) };
  const runsPerSec: Row = { group: "streaming", figure: `completed runs/s, ${streams}`, unit: "1/s", better: "higher", values: per((ws) => mean(ws.map((w) => w.runsPerSec))) };
  if (c === 1) {
    const v = p50.values;
    p50.target = { text: "≤ FLOOR + 2 ms", met: v.tollgate! <= v.floor! + 2 };
  }
  if (c === 200) {
    const v = tokensPerSec.values;
    tokensPerSec.target = { text: "≥ 2× PEER, ≥ 0.7× FLOOR", met: v.tollgate! >= 2 * v.peer! && v.tollgate! >= 0.7 * v.floor! };
  }
  // CPU per token is what the server would cost on a machine of its own, where the model and
  // the load generator do not compete with it for the two cores.
  const cpuPerToken: Row = {
    group: "streaming",
    figure: `server CPU per token event, ${streams}`,
    unit: "µs",
    better: "lower",
    values: per((ws) => (1e6 * ws.reduce((a, w) => a + w.cpu.server!, 0)) / ws.reduce((a, w) => a + w.tokensPerSec * (w.windowMs / 1000), 0)),
  };
  return [p50, p99, tokensPerSec, runsPerSec, cpuPerToken];
}
