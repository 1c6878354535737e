/** The results as a markdown table (printed and written) and as JSON with the machine's details. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Row } from "./context.js";
import { REPO_ROOT } from "./processes.js";
import type { Settings } from "./settings.js";
import { ratio } from "./stats.js";

export interface Machine {
  date: string;
  cpu: string;
  cores: number;
  memory_gib: number;
  node: string;
  os: string;
  versions: Record<string, string>;
}

export interface Results {
  machine: Machine;
  settings: Settings;
  duration_s: number;
  rows: Row[];
  failures: Array<{ suite: string; error: string }>;
}

export function machineInfo(): Machine {
  const version = (pkg: string) => {
    try {
      return (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
    } catch {
      return "?";
    }
  };
  return {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    versions: Object.fromEntries(
      ["hono", "@hono/node-server", "@langchain/core", "@langchain/langgraph", "@langchain/openai", "@langchain/langgraph-api", "better-sqlite3"].map((p) => [p, version(p)]),
    ),
  };
}

function num(v: number | undefined, unit: string): string {
  if (v === undefined || !Number.isFinite(v)) return "–";
  if (unit === "B") return Math.round(v).toLocaleString("en-US");
  const a = Math.abs(v);
  return a >= 1000 ? Math.round(v).toLocaleString("en-US") : a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
}

const times = (r: number) => (Number.isFinite(r) ? `${r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2)}×` : "–");

export function markdown(res: Results): string {
  const m = res.machine;
  const lines = [
    `### tollgate bench (${res.settings.mode}) — ${m.date.slice(0, 10)}`,
    "",
    `${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, Node ${m.node}, ${m.os}; run took ${Math.round(res.duration_s)} s.`,
    `FLOOR = bare Hono SSE relay of ChatOpenAICompletions, TOLLGATE = src/main.ts, PEER = langgraph dev ${m.versions["@langchain/langgraph-api"]} (--n-jobs-per-worker ${res.settings.peerJobs}: up to ${res.settings.peerJobs} of its runs at once, the rest queued).`,
    "Ratios are TOLLGATE ÷ FLOOR and TOLLGATE ÷ PEER: below 1 is better for lower-is-better figures (ms, MB, B), above 1 for rates.",
    "",
    "| figure | unit | FLOOR | TOLLGATE | PEER | ÷ FLOOR | ÷ PEER | target |",
    "|---|---|---:|---:|---:|---:|---:|---|",
  ];
  for (const r of res.rows) {
    const cell = (t: "floor" | "tollgate" | "peer") => `${num(r.values[t], r.unit)}${r.remark?.[t] ? ` (${r.remark[t]})` : ""}`;
    const target = r.target ? `${r.target.met ? "✅" : "❌"} ${r.target.text}` : "";
    lines.push(
      `| ${r.figure} | ${r.unit} | ${cell("floor")} | ${cell("tollgate")} | ${cell("peer")} | ${times(ratio(r.values.tollgate, r.values.floor))} | ${times(ratio(r.values.tollgate, r.values.peer))} | ${target} |`,
    );
  }
  if (res.failures.length) {
    lines.push("", "**Suites that failed:**", ...res.failures.map((f) => `- ${f.suite}: ${f.error.split("\n")[0]}`));
  }
  return `${lines.join("\n")}\n`;
}

export function writeResults(res: Results): { md: string; json: string } {
  const dir = path.join(REPO_ROOT, "bench/results");
  fs.mkdirSync(dir, { recursive: true });
  // A smoke run must not overwrite the published full-run figures.
  const base = res.settings.mode === "quick" ? "quick" : "latest";
  const md = path.join(dir, `${base}.md`);
  const json = path.join(dir, `${base}.json`);
  fs.writeFileSync(md, markdown(res));
  fs.writeFileSync(json, `${JSON.stringify(res, null, 2)}\n`);
  return { md, json };
}
