/**
 * Child processes of the bench: each in its own process group, so one signal reaches a server
 * and everything it spawned (langgraph dev runs a CLI, tsx and the server). Every group started
 * here is killed when the bench exits, however it exits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const GC_ON_SIGNAL = pathToFileURL(path.join(REPO_ROOT, "bench/gc-on-signal.mjs")).href;

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
  /** SIGSTOP / SIGCONT the group, so an idle target takes no CPU from the one being measured. */
  pause(): void;
  resume(): void;
  kill(): Promise<void>;
  output(): string;
}

const live = new Set<Child>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const killAll = () => {
    for (const c of live) signalGroup(c.proc, "SIGCONT"), signalGroup(c.proc, "SIGKILL");
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
}

/** Starts `node <args>` in a new process group and waits until `ready` gives its URL. */
export async function startChild(o: StartOptions): Promise<Child> {
  hookExit();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.includes(k)) env[k] = v;
  Object.assign(env, o.env);
  if (o.gcOnSignal) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ""} --import=${GC_ON_SIGNAL}`.trim();
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
