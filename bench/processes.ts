/**
 * Child processes of the bench: each in its own process group, so one signal reaches a server
 * and everything it spawned (langgraph dev runs a CLI, tsx and the server). Every group started
 * here is killed when the bench exits, however it exits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nowUs } from "./clock.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const GC_ON_SIGNAL = pathToFileURL(path.join(REPO_ROOT, "bench/gc-on-signal.mjs")).href;
const LOOP_LAG = pathToFileURL(path.join(REPO_ROOT, "bench/loop-lag.mjs")).href;

/** tollgate's and the model's variables: never inherited from the developer's shell. */
const SCRUBBED = ["PORT", "HOST", "DATA_DIR", "MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "APPROVAL_TTL_SECONDS", "MAX_ROUNDS", "DEMO_TOKEN_DELAY_MS", "DATABASE_URL", "DATABASE_POOL_SIZE", "REPLICA_LEASE_SECONDS"];

export interface Child {
  name: string;
  url: string;
  proc: ChildProcess;
  /** Resident memory of the whole process group, in bytes. */
  rss(): number;
  /** CPU time (user + system) the group's live processes have used so far, in seconds. */
  cpuSeconds(): number;
  /** Full GC in every node process of the group (only if started with `gcOnSignal`). */
  gc(): void;
  /** Event-loop lag inside the group's node processes (only if started with `loopLag`). */
  loopLag?: LoopLagControl;
  /** SIGSTOP / SIGCONT the group, so an idle target takes no CPU from the one being measured. */
  pause(): void;
  resume(): void;
  kill(): Promise<void>;
  output(): string;
}

const live = new Set<Child>();
const lagDirs = new Set<string>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const killAll = () => {
    for (const c of live) signalGroup(c.proc, "SIGCONT"), signalGroup(c.proc, "SIGKILL");
    for (const d of lagDirs) fs.rmSync(d, { recursive: true, force: true });
  };
  process.once("exit", killAll);
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(s, () => {
      killAll();
      process.exit(130);
    });
  }
}

export interface StartOptions {
  name: string;
  /** argv after `node`. */
  args: string[];
  env?: Record<string, string>;
  /** Resolves to the URL once the child is ready, given its output so far (null = not yet). */
  ready: (output: string) => Promise<string | null> | string | null;
  timeoutMs?: number;
  /** Preload bench/gc-on-signal.mjs into every node process of the group, for `gc()`. */
  gcOnSignal?: boolean;
  /** Preload bench/loop-lag.mjs into every node process of the group, for `loopLag`. */
  loopLag?: boolean;
}

/** One process's event-loop lag over a window (ms; null if the histogram took no sample). */
export interface LoopLag {
  /** How long the histogram ran, ms. */
  ms: number;
  /** How long the "start" and the "stop" signal each waited for the process's event loop, ms. */
  startDelayMs: number | null;
  stopDelayMs: number | null;
  samples: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

export interface LoopLagReading {
  /** Each node process of the group that answered, by pid. */
  byPid: Record<string, LoopLag>;
  /** The pid listening on the child's port (the one serving HTTP), if found. */
  serving: string | null;
  /** Processes with the preload that did not answer in time. */
  missing: string[];
}

export interface LoopLagControl {
  /** Resets and starts the histogram in every node process of the group; resolves once all have. */
  start(): Promise<void>;
  /** Stops it and reads every process's figures. */
  stop(): Promise<LoopLagReading>;
}

/** Starts `node <args>` in a new process group and waits until `ready` gives its URL. */
export async function startChild(o: StartOptions): Promise<Child> {
  hookExit();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.includes(k)) env[k] = v;
  Object.assign(env, o.env);
  if (o.gcOnSignal) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ""} --import=${GC_ON_SIGNAL}`.trim();
  let lagDir: string | undefined;
  if (o.loopLag) {
    lagDir = fs.mkdtempSync(path.join(os.tmpdir(), `tollgate-bench-lag-${o.name}-`));
    lagDirs.add(lagDir);
    env.BENCH_LOOP_LAG_DIR = lagDir;
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ""} --import=${LOOP_LAG}`.trim();
  }
  const proc = spawn(process.execPath, o.args, { cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (b: Buffer) => {
    out += b.toString();
    if (out.length > 200_000) out = out.slice(-100_000); // chatty servers must not grow the bench
  };
  proc.stdout!.on("data", keep);
  proc.stderr!.on("data", keep);
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  let killed = false;
  const child: Child = {
    name: o.name,
    url: "",
    proc,
    rss: () => groupRss(proc.pid!),
    cpuSeconds: () => groupCpu(proc.pid!),
    gc() {
      if (!o.gcOnSignal) throw new Error(`${o.name} was not started with gcOnSignal`);
      // Only node processes: SIGUSR2 would end anything else (an esbuild service, say).
      for (const { pid } of groupStats(proc.pid!)) {
        try {
          if (fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "node") process.kill(Number(pid), "SIGUSR2");
        } catch {
          // ended meanwhile
        }
      }
    },
    loopLag: lagDir ? loopLagControl(lagDir, proc.pid!, () => child.url) : undefined,
    pause: () => signalGroup(proc, "SIGSTOP"),
    resume: () => signalGroup(proc, "SIGCONT"),
    output: () => out,
    async kill() {
      if (killed) return;
      killed = true;
      signalGroup(proc, "SIGCONT"); // a stopped process would hold SIGTERM until continued
      signalGroup(proc, "SIGTERM");
      const timer = setTimeout(() => signalGroup(proc, "SIGKILL"), 3000);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      clearTimeout(timer);
      signalGroup(proc, "SIGKILL"); // whatever the leader left behind in its group
      live.delete(child);
      if (lagDir) {
        fs.rmSync(lagDir, { recursive: true, force: true });
        lagDirs.delete(lagDir);
      }
    },
  };
  live.add(child);
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      live.delete(child);
      throw new Error(`${o.name} exited before it was ready:\n${out}`);
    }
    const url = await o.ready(out);
    if (url) return Object.assign(child, { url });
    if (Date.now() > deadline) {
      await child.kill();
      throw new Error(`${o.name} not ready after ${o.timeoutMs ?? 30_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** argv for running a TypeScript file with tsx's loader (no wrapper process). */
export const tsxArgs = (file: string, nodeFlags: string[] = []): string[] => [...nodeFlags, "--import", TSX_LOADER, file];

/** A `ready` check for servers that print `<anything> listening on <url>`. */
export const listeningLine = (output: string): string | null => /listening on (http:\/\/\S+)/.exec(output)?.[1] ?? null;

function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-proc.pid!, signal);
  } catch {
    // ESRCH: the group is gone already
  }
}

/** The pids in process group `pgid`, with their /proc/<pid>/stat fields after the command name. */
function groupStats(pgid: number): Array<{ pid: string; fields: string[] }> {
  const out: Array<{ pid: string; fields: string[] }> = [];
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // The command name (2nd field) may hold spaces: count fields after its ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid) out.push({ pid, fields }); // fields[2] = pgrp
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/**
 * bench/loop-lag.mjs's side in the bench: the command goes to `<dir>/command`, SIGUSR1 to each
 * node process of the group that has the preload (its `<pid>.ready`), and the answers are read
 * back from `<dir>/<pid>.json` (waiting until each carries this command's number).
 */
/** What loop-lag.mjs writes back (figures on "stop" only). */
type Answer = Omit<LoopLag, "startDelayMs" | "stopDelayMs"> & { seq: number; delayMs: number | null };

function loopLagControl(dir: string, pgid: number, url: () => string): LoopLagControl {
  let seq = 0;
  const send = async (cmd: "start" | "stop") => {
    const n = ++seq;
    const pids = groupStats(pgid)
      .map((s) => s.pid)
      .filter((pid) => fs.existsSync(path.join(dir, `${pid}.ready`)));
    const command = path.join(dir, "command");
    fs.writeFileSync(`${command}.tmp`, JSON.stringify({ cmd, seq: n, sentUs: nowUs() }));
    fs.renameSync(`${command}.tmp`, command);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGUSR1");
      } catch {
        // ended meanwhile
      }
    }
    const answers: Record<string, Answer> = {};
    const deadline = Date.now() + 10_000; // a loop blocked for seconds answers late, not never
    while (Date.now() < deadline && Object.keys(answers).length < pids.length) {
      for (const pid of pids) {
        if (answers[pid]) continue;
        try {
          const a = JSON.parse(fs.readFileSync(path.join(dir, `${pid}.json`), "utf8")) as Answer;
          if (a.seq === n) answers[pid] = a;
        } catch {
          // not written yet
        }
      }
      if (Object.keys(answers).length < pids.length) await sleep(10);
    }
    return { pids, answers };
  };
  let started: Record<string, Answer> = {};
  return {
    async start() {
      started = (await send("start")).answers;
    },
    async stop() {
      const { pids, answers } = await send("stop");
      const byPid: Record<string, LoopLag> = {};
      for (const [pid, a] of Object.entries(answers)) {
        byPid[pid] = { ms: a.ms, startDelayMs: started[pid]?.delayMs ?? null, stopDelayMs: a.delayMs, samples: a.samples, p50: a.p50, p99: a.p99, max: a.max, mean: a.mean };
      }
      const port = Number(new URL(url()).port);
      return { byPid, serving: listeningPid(pgid, port), missing: pids.filter((p) => !answers[p]) };
    },
  };
}

/** The pid in group `pgid` that holds the socket listening on TCP `port`, from /proc/net/tcp{,6} and /proc/<pid>/fd. */
export function listeningPid(pgid: number, port: number): string | null {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = fs.readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[3] === "0A" && parseInt(cols[1]!.split(":").pop()!, 16) === port) inodes.add(`socket:[${cols[9]}]`);
    }
  }
  if (inodes.size === 0) return null;
  for (const { pid } of groupStats(pgid)) {
    try {
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (inodes.has(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // ended meanwhile
    }
  }
  return null;
}

/** Sum of VmRSS over the processes of group `pgid`, in bytes. */
export function groupRss(pgid: number): number {
  let total = 0;
  for (const { pid } of groupStats(pgid)) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** utime + stime of the live processes of group `pgid`, in seconds. */
export function groupCpu(pgid: number): number {
  // After the command name: state, ppid, pgrp, …; utime and stime are fields 14 and 15 of stat.
  return groupStats(pgid).reduce((s, { fields }) => s + (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS, 0);
}

export { freePort } from "../test/helpers/free-port.js";
