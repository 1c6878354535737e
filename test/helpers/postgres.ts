/**
 * Throwaway PostgreSQL clusters for tests: `initdb` into a temp dir, `pg_ctl start` on a free
 * port, `pg_ctl stop -m immediate` and the dir removed when done. The server binaries come from
 * Debian's `postgresql-15` package (`.ci/run` installs it), or from `PG_BIN`.
 *
 * initdb refuses to run as root, so as root every PostgreSQL command runs as the `postgres` OS
 * user through `runuser`. Durability is switched off (`--no-sync`, `fsync=off`, …): a test
 * cluster never outlives its test, and a cluster is up in about a second.
 *
 * A suite asks `skipPostgresSuite()` first, as browser suites ask `skipBrowserSuite()`: without
 * PostgreSQL it skips with one line saying why, except under `CI=true`, where it must fail.
 */
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./free-port.js";

const run = promisify(execFile);

/** Where Debian's PostgreSQL 15 server binaries live. */
export const DEFAULT_PG_BIN = "/usr/lib/postgresql/15/bin";
/** Temp dirs of our clusters start with this, so a later run can find ones a killed run left. */
const DIR_PREFIX = "tollgate-pg-";
const OWNER_FILE = "owner.pid";

/** The directory holding initdb and pg_ctl: `PG_BIN` if set, else Debian's. */
export function pgBinDir(): string {
  return process.env.PG_BIN || DEFAULT_PG_BIN;
}

export interface Availability {
  ok: boolean;
  why?: string;
}

const isRoot = () => process.getuid?.() === 0;

/** uid/gid of the `postgres` OS user, from /etc/passwd (no process to spawn). */
function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const line = fs.readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith("postgres:"));
    if (!line) return undefined;
    const [, , uid, gid] = line.split(":");
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

const RUNUSER = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"];

/** Are the server binaries there (and, as root, runuser and a `postgres` user)? Synchronous, for `describe.skipIf`. */
export function postgresAvailable(): Availability {
  const bin = pgBinDir();
  for (const tool of ["initdb", "pg_ctl", "postgres"]) {
    if (!fs.existsSync(path.join(bin, tool))) {
      return { ok: false, why: `${path.join(bin, tool)} not found (install it: apt-get install -y postgresql-15, or set PG_BIN)` };
    }
  }
  if (isRoot()) {
    if (!RUNUSER.some((p) => fs.existsSync(p))) return { ok: false, why: "running as root and runuser is not installed (initdb refuses root)" };
    if (!postgresUser()) return { ok: false, why: "running as root and there is no `postgres` OS user to run initdb as" };
  }
  return { ok: true };
}

/**
 * What a PostgreSQL suite does with `postgresAvailable()`: returns true when it should skip (and
 * prints one line saying why). Under `CI=true` it never skips: the suite runs and its `beforeAll`
 * must call `assertPostgresAvailable()`, which fails it with the reason.
 */
export function skipPostgresSuite(suite: string, avail: Availability = postgresAvailable()): boolean {
  if (avail.ok || process.env.CI === "true") return false;
  console.log(`[${suite}] skipped: no PostgreSQL: ${avail.why}`);
  return true;
}

/** Throws the reason when PostgreSQL cannot be started (CI must not pass by skipping). */
export function assertPostgresAvailable(avail: Availability = postgresAvailable()): void {
  if (!avail.ok) throw new Error(`PostgreSQL tests need the server binaries (CI=true does not skip them): ${avail.why}`);
}

/** A running throwaway cluster. Everything in it is gone after `stop()`. */
export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser on the maintenance database. */
  url: string;
  port: number;
  /** Its temp dir (data dir, socket, server.log); removed by `stop()`. */
  dir: string;
  /** Stops the server at once (no checkpoint: nothing in it is kept) and removes its directory. Idempotent. */
  stop(): Promise<void>;
  /** Creates a fresh, empty database (named `name`, or a unique name) and returns its postgres:// URL. */
  createDatabase(name?: string): Promise<string>;
  /**
   * Stops the server, keeping its data (`-m fast`: clients are cut off, committed work is kept,
   * which an immediate stop would not promise with this cluster's `synchronous_commit=off`).
   */
  down(): Promise<void>;
  /** Starts it again on the same port with the same data, after `down()`. */
  up(): Promise<void>;
}

/** argv that runs a PostgreSQL binary as the `postgres` user when we are root, as ourselves otherwise. */
function pgCommand(tool: string, args: string[]): [string, string[]] {
  const exe = path.join(pgBinDir(), tool);
  if (!isRoot()) return [exe, args];
  return [RUNUSER.find((p) => fs.existsSync(p)) ?? "runuser", ["-u", "postgres", "--", exe, ...args]];
}

async function pgRun(tool: string, args: string[], cwd: string): Promise<void> {
  const [cmd, argv] = pgCommand(tool, args);
  try {
    // cwd: the postgres user may not be allowed into ours (pg_ctl and initdb complain).
    await run(cmd, argv, { cwd, env: { ...process.env, LC_ALL: "C" } });
  } catch (e) {
    const err = e as Error & { stderr?: string; stdout?: string };
    let log = "";
    try {
      log = fs.readFileSync(path.join(cwd, "server.log"), "utf8").slice(-2000);
    } catch {}
    throw new Error(`${tool} ${args.join(" ")} failed: ${err.stderr || err.stdout || err.message}${log ? `\nserver.log:\n${log}` : ""}`);
  }
}

/** Stops a cluster's server and removes its dir, synchronously (usable in an 'exit' handler). */
function stopSync(dir: string): void {
  if (fs.existsSync(path.join(dir, "data", "postmaster.pid"))) {
    const [cmd, argv] = pgCommand("pg_ctl", ["-D", path.join(dir, "data"), "stop", "-m", "immediate", "-w"]);
    if (spawnSync(cmd, argv, { cwd: dir, stdio: "ignore" }).status !== 0) killPostmaster(dir);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** When pg_ctl cannot stop the server: SIGKILL the postmaster (its backends exit when it dies). */
function killPostmaster(dir: string): void {
  try {
    const pid = Number(fs.readFileSync(path.join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
    if (pid > 0) process.kill(pid, "SIGKILL");
  } catch {
    // no pid file or no such process: nothing left to stop
  }
}

const live = new Set<string>();
let hooksInstalled = false;

/**
 * Last-resort cleanup if a test never calls `stop()`. 'exit' alone is not enough: vitest ends its
 * fork workers with SIGTERM, whose default action skips 'exit' handlers. A SIGKILLed process runs
 * nothing: `sweepOrphans` stops what it left at the next start.
 */
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const cleanup = () => {
    for (const dir of live) stopSync(dir);
    live.clear();
  };
  process.once("exit", cleanup);
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  const onSignal = (sig: NodeJS.Signals) => {
    cleanup();
    for (const s of signals) process.off(s, onSignal);
    // Re-raise so the process dies as it would have without us, unless someone else handles it.
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  for (const s of signals) process.on(s, onSignal);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Stops clusters whose owning test process died without running its handlers (SIGKILL). */
function sweepOrphans(): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = path.join(os.tmpdir(), name);
    let owner: number;
    try {
      owner = Number(fs.readFileSync(path.join(dir, OWNER_FILE), "utf8"));
    } catch {
      continue; // being set up right now, or not ours
    }
    if (owner > 0 && !alive(owner)) stopSync(dir);
  }
}

let dbCounter = 0;
const DB_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Starts a throwaway cluster on a free port of 127.0.0.1 (trust auth, user `postgres`, no
 * password). Stop it when done; if the process exits first, the cluster is stopped then.
 */
export async function startPostgres(): Promise<PgCluster> {
  assertPostgresAvailable();
  sweepOrphans();
  installHooks();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), DIR_PREFIX));
  live.add(dir);
  try {
    fs.writeFileSync(path.join(dir, OWNER_FILE), String(process.pid));
    const user = isRoot() ? postgresUser() : undefined;
    if (user) fs.chownSync(dir, user.uid, user.gid);
    const data = path.join(dir, "data");
    // C locale: the same collation (ORDER BY of text) on every machine, whatever LANG says.
    await pgRun("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C"], dir);
    const port = await freePort();
    const serverOpts = [
      `-p ${port}`,
      `-k ${dir}`, // the Unix socket goes in our dir, not /var/run/postgresql (root-owned, maybe absent)
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=300",
    ].join(" ");
    // -w: pg_ctl returns once the server accepts connections. -l: the server's output goes to a
    // file; without it the server would hold our stdout pipe open and execFile would never return.
    const start = () => pgRun("pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-w", "-t", "60", "-o", serverOpts, "start"], dir);
    await start();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    let stopped = false;
    return {
      url,
      port,
      dir,
      async stop() {
        if (stopped) return;
        stopped = true;
        await pgRun("pg_ctl", ["-D", data, "stop", "-m", "immediate", "-w"], dir).catch(() => killPostmaster(dir));
        fs.rmSync(dir, { recursive: true, force: true });
        live.delete(dir); // only now: a process exiting mid-stop still stops the cluster
      },
      down: () => pgRun("pg_ctl", ["-D", data, "stop", "-m", "fast", "-w"], dir),
      up: start,
      async createDatabase(name = `t_${process.pid}_${++dbCounter}`) {
        if (!DB_NAME.test(name)) throw new Error(`createDatabase: not a plain database name: ${JSON.stringify(name)}`);
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          // template0: truly empty, whatever someone may have put in template1.
          await client.query(`CREATE DATABASE "${name}" TEMPLATE template0`);
        } finally {
          await client.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
    };
  } catch (e) {
    live.delete(dir);
    stopSync(dir);
    throw e;
  }
}

/** Runs `fn` with a fresh cluster and stops the cluster afterwards, whatever `fn` does. */
export async function withPostgres<T>(fn: (cluster: PgCluster) => Promise<T>): Promise<T> {
  const cluster = await startPostgres();
  try {
    return await fn(cluster);
  } finally {
    await cluster.stop();
  }
}
