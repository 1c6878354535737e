/**
 * `npx tsx bench/cpuprofile-breakdown.ts FILE.cpuprofile [--skip-s 3] [--top 40] [--match regex]`:
 * a .cpuprofile (bench/profile.ts, bench/run-cost.ts --profile) broken down by who spends the
 * time: self time by owner (tollgate's own files by file, LangGraph, LangChain core, the openai
 * SDK, SQLite, node core, GC…), then inclusive ("total") time of tollgate's own functions and of
 * any function matching --match, each sample counted once per function however deep it recurses.
 * `--skip-s N` drops the first N seconds (start-up, module compilation, warm-up).
 */
import fs from "node:fs";
import { REPO_ROOT } from "./processes.js";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

const file = process.argv[2]!;
const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const skipUs = Number(arg("skip-s", "0")) * 1e6;
const topN = Number(arg("top", "40"));
const match = arg("match", "");
const p = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function where(n: Node): string {
  return n.callFrame.url.replace(/^file:\/\//, "").replace(`${REPO_ROOT}/`, "").replace(/^\/work\/main\//, "");
}
function owner(n: Node): string {
  const w = where(n);
  const fn = n.callFrame.functionName;
  if (!w) return fn.startsWith("(") ? fn : "(native)";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(w);
  if (m) return m[1]!;
  if (w.startsWith("node:")) return "node core";
  if (w.startsWith("src/") || w.startsWith("graphs/")) return "tollgate";
  return w.split("/")[0]!;
}
const key = (n: Node) => `${n.callFrame.functionName || "(anonymous)"} ${where(n)}:${n.callFrame.lineNumber + 1}`;

const selfByOwner = new Map<string, number>();
const selfByOurFile = new Map<string, number>();
const selfByFn = new Map<string, number>();
const totalOurs = new Map<string, number>();
const totalMatch = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
let t = 0;
let total = 0;
const matchRe = match ? new RegExp(match) : undefined;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i] ?? 0;
  if (t < skipUs) continue;
  const d = p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0; // the delta after a sample is its duration
  const n = byId.get(p.samples[i]!)!;
  total += d;
  const o = owner(n);
  add(selfByOwner, o, d);
  if (o === "tollgate") add(selfByOurFile, where(n), d);
  add(selfByFn, `${o.padEnd(28)} ${key(n)}`, d);
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const x = byId.get(id)!;
    const k = key(x);
    if (seen.has(k)) continue;
    seen.add(k);
    if (owner(x) === "tollgate") add(totalOurs, k, d);
    if (matchRe?.test(k)) add(totalMatch, k, d);
  }
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `${pct(us)}  ${k}`).join("\n");
process.stdout.write(`${(total / 1e6).toFixed(2)} s sampled after the first ${skipUs / 1e6} s\n\n`);
process.stdout.write(`self time by owner\n${top(selfByOwner, 20)}\n\n`);
process.stdout.write(`self time in tollgate's files\n${top(selfByOurFile, 20)}\n\n`);
process.stdout.write(`hottest functions (self)\n${top(selfByFn, topN)}\n\n`);
process.stdout.write(`tollgate's functions, total time (self + callees)\n${top(totalOurs, topN)}\n`);
if (matchRe) process.stdout.write(`\nmatching /${match}/, total time\n${top(totalMatch, topN)}\n`);
