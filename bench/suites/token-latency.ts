/**
 * Figure 3: added latency per token, from the model server writing a token to the client
 * reading its event. Tokens are paced (`delayMs` apart, like a fast real model) so each one
 * travels alone; the model stamps each with the machine's monotonic clock.
 */
import { type BenchContext, type Row, rotate } from "../context.js";
import { directive } from "../directive.js";
import { closedLoop, untilIdle } from "../load.js";
import { dist } from "../stats.js";
import { TARGETS, type TargetName } from "../targets.js";
import { peerQueueRemark, runningAtOnce } from "./streaming.js";

export async function tokenLatencySuite(ctx: BenchContext): Promise<Row[]> {
  const s = ctx.settings.paced;
  const message = () => directive({ tokens: s.tokens, delay: s.delayMs });
  const rows: Row[] = [];
  for (const c of s.concurrencies) {
    const lags: Record<TargetName, number[]> = { floor: [], tollgate: [], peer: [] };
    const errors: Record<TargetName, number> = { floor: 0, tollgate: 0, peer: 0 };
    for (let rep = 0; rep < s.reps; rep++) {
      for (const name of rotate(TARGETS, rep)) {
        ctx.focus(name);
        const w = await closedLoop(ctx.targets[name], c, s.windowMs, message, { stamps: true, rampMs: s.rampMs });
        for (const r of w.runs) lags[name].push(...r.lags);
        await untilIdle(ctx.targets[name]);
        errors[name] += w.errors;
      }
    }
    const d = Object.fromEntries(TARGETS.map((t) => [t, dist(lags[t])])) as Record<TargetName, ReturnType<typeof dist>>;
    ctx.log(`  @${c}: ${TARGETS.map((t) => `${t} p50 ${d[t].p50.toFixed(2)} p99 ${d[t].p99.toFixed(2)} ms (${d[t].n} tokens)`).join(", ")}`);
    const streams = `${c} stream${c === 1 ? "" : "s"}, a token every ${s.delayMs} ms`;
    const pick = (p: "p50" | "p99") => Object.fromEntries(TARGETS.map((t) => [t, d[t][p]]));
    const concurrent_runs = runningAtOnce(c, ctx.settings.peerJobs);
    const remark = peerQueueRemark(c, ctx.settings.peerJobs);
    const p50: Row = { group: "token latency", figure: `added latency per token p50, ${streams}`, unit: "ms", better: "lower", values: pick("p50"), remark, detail: { concurrent_runs, tokens: Object.fromEntries(TARGETS.map((t) => [t, d[t].n])), errors } };
    const p99: Row = { group: "token latency", figure: `added latency per token p99, ${streams}`, unit: "ms", better: "lower", values: pick("p99"), remark, detail: { concurrent_runs } };
    if (c === 50) {
      for (const row of [p50, p99]) row.target = { text: "≤ 1.5× FLOOR", met: row.values.tollgate! <= 1.5 * row.values.floor! };
    }
    rows.push(p50, p99);
  }
  return rows;
}
