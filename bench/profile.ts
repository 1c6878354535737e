/**
 * `npx tsx bench/profile.ts [--target tollgate|floor] [--streams 200] [--seconds 10] [--tokens 100]`:
 * one server under closed-loop load with `node --cpu-prof`, then the hottest functions (self
 * time) and the share of each package. The .cpuprofile lands in bench/results/profiles/ (open
 * it in Chrome DevTools or speedscope for the call tree).
 */
import fs from "node:fs";
import path from "node:path";
import { directive } from "./directive.js";
import { closedLoop } from "./load.js";
import { REPO_ROOT } from "./processes.js";
import { startFloor, startModel, startTollgate } from "./targets.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};

async function main(): Promise<void> {
  const target = arg("target", "tollgate");
  const streams = Number(arg("streams", "200"));
  const seconds = Number(arg("seconds", "10"));
  const tokens = Number(arg("tokens", "100"));
  const dir = path.join(REPO_ROOT, "bench/results/profiles");
  fs.mkdirSync(dir, { recursive: true });
  const before = new Set(fs.readdirSync(dir));
  const flags = ["--cpu-prof", `--cpu-prof-dir=${dir}`];
  const model = await startModel();
  const server = target === "floor" ? await startFloor(model.url, { nodeFlags: flags }) : await startTollgate(model.url, { nodeFlags: flags });
  try {
    const message = () => directive({ tokens, firstGap: 5 });
    await closedLoop(server, 8, 2000, message);
    const w = await closedLoop(server, streams, seconds * 1000, message);
    process.stderr.write(`${target} @${streams}: ${w.tokensPerSec.toFixed(0)} token events/s, ${w.runsPerSec.toFixed(1)} runs/s, ${w.errors} errors\n`);
  } finally {
    await server.child.kill(); // SIGTERM: the server exits normally and writes its profile
    await model.kill();
  }
  const file = fs.readdirSync(dir).find((f) => f.endsWith(".cpuprofile") && !before.has(f));
  if (!file) throw new Error("no profile was written");
  summarize(JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")) as CpuProfile);
  process.stderr.write(`profile: ${path.join(dir, file)}\n`);
}

function summarize(p: CpuProfile): void {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const where = f.url.replace(/^file:\/\//, "").replace(`${REPO_ROOT}/`, "");
    fns.set(`${f.functionName || "(anonymous)"} ${where}:${f.lineNumber + 1}`, (fns.get(`${f.functionName || "(anonymous)"} ${where}:${f.lineNumber + 1}`) ?? 0) + us);
    pkgs.set(packageOf(where, f.functionName), (pkgs.get(packageOf(where, f.functionName)) ?? 0) + us);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`).join("\n");
  process.stdout.write(`\nself time by package (${(total / 1e6).toFixed(1)} s sampled)\n${top(pkgs, 15)}\n\nhottest functions (self time)\n${top(fns, 30)}\n`);
}

function packageOf(where: string, fn: string): string {
  if (!where) return fn.startsWith("(") ? fn : "(native)";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where);
  if (m) return m[1]!;
  if (where.startsWith("node:")) return "node core";
  return where.split("/")[0]!;
}

main().catch((err: unknown) => {
  process.stderr.write(`profile failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
