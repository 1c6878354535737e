/**
 * `npx tsx bench/ab-tput.ts --other /path/to/other/checkout [--reps 3] [--streams 200]`: this
 * checkout's TOLLGATE against another checkout's (say, main's HEAD in a worktree), on one model
 * server, 200-stream closed-loop windows alternating (the other paused), as probe.ts's `tput`:
 * token events/s and server CPU per token event for each, per repetition.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { directive } from "./directive.js";
import { closedLoop, untilIdle } from "./load.js";
import { listeningLine, startChild, tsxArgs } from "./processes.js";
import { startModel, startTollgate, type Target } from "./targets.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const other = arg("other", "");
const reps = Number(arg("reps", "3"));
const streams = Number(arg("streams", "200"));
const model = await startModel();
const mine = await startTollgate(model.url);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-ab-"));
const child = await startChild({
  name: "other",
  args: tsxArgs(path.join(other, "src/main.ts")),
  env: { MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY", OPENAI_BASE_URL: `${model.url}/v1`, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir },
  ready: listeningLine,
});
const theirs: Target = { ...mine, name: "peer", child };
const targets = [mine, theirs];
const focus = (t: Target) => {
  for (const o of targets) (o === t ? o.child.resume() : o.child.pause());
};
const res = new Map<Target, string[]>();
try {
  for (const t of targets) {
    focus(t);
    await closedLoop(t, 8, 1500, () => directive({ tokens: 100, firstGap: 5 }));
    await untilIdle(t);
  }
  for (let r = 0; r < reps; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      focus(t);
      const x = await closedLoop(t, streams, 5000, () => directive({ tokens: 100, firstGap: 5 }), { rampMs: 2000, drainMs: 10000 });
      res.set(t, [...(res.get(t) ?? []), `${x.tokensPerSec.toFixed(0)}/${((x.cpu.server! * 1e6) / (x.tokensPerSec * 5)).toFixed(0)}µs`]);
      await untilIdle(t);
    }
  }
  process.stdout.write(`token events/s / server CPU per token event, ${streams} streams\nthis checkout: ${res.get(mine)!.join("  ")}\n${other}: ${res.get(theirs)!.join("  ")}\n`);
} finally {
  for (const t of targets) t.child.resume();
  await mine.child.kill();
  await child.kill();
  await model.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
