/**
 * `npx tsx bench/probe.ts [--what ttft,tput,lag,cost1,cost200] [--reps 2]`: a fast FLOOR-vs-TOLLGATE
 * check while iterating on speed (no PEER, short windows, the two servers alternating, the other
 * paused). Not the published table. Each figure prints one `a/b` pair per repetition:
 * - `ttft`: TTFT p50/p99 (ms) at 1 stream;
 * - `tput`: token events/s at 200 streams / server CPU per token event (µs);
 * - `lag`: added latency per token p50/p99 (ms), 50 streams, a token every 10 ms;
 * - `costN`: runs/s at 20 streams of N-token runs / server CPU per run (ms): `cost1` is what a run
 *   costs besides its tokens, `cost200` minus it what 199 tokens cost.
 */
import { directive } from "./directive.js";
import { closedLoop, untilIdle } from "./load.js";
import { dist } from "./stats.js";
import { startFloor, startModel, startTollgate, type Target } from "./targets.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};

async function main(): Promise<void> {
  const what = arg("what", "ttft,tput,lag").split(",");
  const reps = Number(arg("reps", "2"));
  const model = await startModel();
  const floor = await startFloor(model.url);
  const tollgate = await startTollgate(model.url);
  const targets: Target[] = [floor, tollgate];
  const focus = (t: Target) => {
    for (const o of targets) (o === t ? o.child.resume() : o.child.pause());
  };
  try {
    for (const t of targets) {
      focus(t);
      await closedLoop(t, 8, 1500, () => directive({ tokens: 100, firstGap: 5 }));
      await untilIdle(t);
    }
    for (const w of what) {
      const res: Record<string, number[][]> = {};
      for (let r = 0; r < reps; r++) {
        for (const t of r % 2 ? [...targets].reverse() : targets) {
          focus(t);
          let v: number[];
          if (w === "ttft") {
            const x = await closedLoop(t, 1, 3000, () => directive({ tokens: 100, firstGap: 5 }), { rampMs: 500 });
            const d = dist(x.ttftMs);
            v = [d.p50, d.p99];
          } else if (w === "tput") {
            const x = await closedLoop(t, 200, 5000, () => directive({ tokens: 100, firstGap: 5 }), { rampMs: 2000, drainMs: 10000 });
            v = [x.tokensPerSec, ((x.cpu.server! ) * 1e6) / (x.tokensPerSec * 5)];
          } else if (w.startsWith("cost")) {
            const n = Number(w.slice(4));
            const x = await closedLoop(t, 20, 4000, () => directive({ tokens: n }), { rampMs: 1000, drainMs: 10000 });
            v = [x.runsPerSec, (x.cpu.server! * 1e6) / (x.runsPerSec * 4) / 1000];
          } else {
            const x = await closedLoop(t, 50, 3000, () => directive({ tokens: 50, delay: 10 }), { stamps: true, rampMs: 1000 });
            const d = dist(x.runs.flatMap((q) => q.lags));
            v = [d.p50, d.p99];
          }
          (res[t.name] ??= []).push(v);
          await untilIdle(t);
        }
      }
      const fmt = (a: number[][]) => a.map((v) => v.map((x) => x.toFixed(2)).join("/")).join("  ");
      process.stdout.write(`${w}: floor ${fmt(res.floor!)} | tollgate ${fmt(res.tollgate!)}\n`);
    }
  } finally {
    for (const t of targets) t.child.resume();
    await tollgate.child.kill();
    await floor.child.kill();
    await model.kill();
  }
}
await main();
