/**
 * Starts the real tollgate server (the `tollgate` command, through `test-server.ts`) as a child process, for tests that need real
 * sockets, disconnects, signals and restarts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensurePgDatabase, pgTestClusterUrl } from "./pg-test-db.js";
import { registerServer } from "./server-registry.js";

/** The repository root (/work/main), derived from this file so tests may run from any cwd. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const ORPHAN_GUARD = pathToFileURL(path.join(REPO_ROOT, "test/helpers/orphan-guard.mjs")).href;
const KILL_POINT = pathToFileURL(path.join(REPO_ROOT, "test/helpers/kill-point.mjs")).href;
const READY = /^tollgate listening on (http:\/\/\S+)\s*$/m;
const READY_TIMEOUT_MS = 20_000;

/** Config the server reads; dropped from the inherited env so a developer's shell cannot leak in. */
const SCRUBBED = [
  "PORT", "HOST", "DATA_DIR", "MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "APPROVAL_TTL_SECONDS", "MAX_ROUNDS",
  "TOLLGATE_KILL_AT", "TOLLGATE_KILL_NTH",
  "AUTH_TOKENS", "AUTH_JWKS_URL", "AUTH_ISSUER", "AUTH_AUDIENCE", "AUTH_ROLES_CLAIM", "TOLLGATE_INSECURE_NO_AUTH",
  "ALLOWED_HOSTS", "CORS_ORIGINS", "RATE_LIMIT_RUNS_PER_MINUTE", "MAX_CONCURRENT_RUNS", "REQUEST_TIMEOUT_SECONDS", "MAX_CONNECTIONS",
  "DATABASE_URL", "DATABASE_POOL_SIZE", "REPLICA_LEASE_SECONDS",
];

export interface ServerProcess {
  /** e.g. `http://127.0.0.1:54321`, as printed by the server. */
  url: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the child wrote so far. */
  stdout(): string;
  stderr(): string;
  /**
   * Sends `signal` (default SIGTERM) and resolves with the exit code (null when killed by a
   * signal). A child still alive after `killGraceMs` (default 10 s) is SIGKILLed, so a hung
   * shutdown fails the test (code null, signal SIGKILL) instead of hanging it. Safe after exit.
   */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartServerOptions {
  /** Reuse a data dir (restart tests). Default: a fresh temp dir, removed when the test process exits. */
  dataDir?: string;
  /**
   * Script to run, relative to the repo root. Default `test/helpers/test-server.ts`: the
   * `tollgate` command with the suites' test tools and graph shapes passed in code.
   */
  entry?: string;
  /** How long `kill()` waits before escalating to SIGKILL. Default 10 000. */
  killGraceMs?: number;
}

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let hooksInstalled = false;

/**
 * Last-resort cleanup if a test forgets `kill()`. 'exit' alone is not enough: vitest ends its
 * fork workers with SIGTERM, whose default action skips 'exit' handlers. (orphan-guard.mjs covers
 * the SIGKILL case from the child's side.)
 */
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const cleanup = () => {
    for (const child of live) child.kill("SIGKILL");
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
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

/**
 * Spawns the server with PORT=0, HOST=127.0.0.1 and DATA_DIR, plus `env` overrides (a value of
 * `undefined` unsets the variable). Resolves once the server prints its listening line; rejects
 * with the collected stderr if the child exits first or is not ready within 20 s.
 * In the PostgreSQL test mode (TOLLGATE_TEST_BACKEND=postgres) an `env` without DATABASE_URL
 * gets the data dir's own database and REPLICA_LEASE_SECONDS=1 (each overridable by `env`).
 */
export async function startServer(env: Record<string, string | undefined> = {}, opts: StartServerOptions = {}): Promise<ServerProcess> {
  installHooks();
  let dataDir = opts.dataDir;
  if (!dataDir) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-"));
    tempDirs.add(dataDir);
  }

  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.includes(k)) childEnv[k] = v;
  Object.assign(childEnv, { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir });
  // The PostgreSQL test mode (test/helpers/pg-test-db.ts): unless the test brings its own
  // DATABASE_URL, the data dir's own database, so a restart on the same dir finds its state. A
  // server restarted after a kill -9 meets the dead one's lease: 1 s lets it take over quickly.
  const pgCluster = pgTestClusterUrl();
  if (pgCluster && !("DATABASE_URL" in env)) {
    childEnv.DATABASE_URL = await ensurePgDatabase(pgCluster, dataDir);
    childEnv.REPLICA_LEASE_SECONDS = "1";
  }
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete childEnv[k];
    else childEnv[k] = v;
  }

  // node --import tsx rather than the tsx CLI: the CLI runs the script in a grandchild, so a
  // SIGKILL (crash tests) would hit the wrapper and orphan the real server. This way child.pid
  // is the server itself.
  // TOLLGATE_KILL_AT (crash tests) loads the preload that SIGKILLs the server at a chosen write.
  const killPoint = childEnv.TOLLGATE_KILL_AT ? ["--import", KILL_POINT] : [];
  const child = spawn(process.execPath, ["--import", ORPHAN_GUARD, ...killPoint, "--import", TSX_LOADER, opts.entry ?? "test/helpers/test-server.ts"], {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe", "ipc"], // ipc: only so orphan-guard notices our death
  });
  child.channel?.unref(); // nor may it keep the test process alive
  live.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (out += s));
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (err += s));

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
    // Spawn failures (e.g. missing binary) emit 'error' and maybe no 'exit'.
    child.once("error", (e) => {
      err += `\nspawn error: ${e.message}`;
      live.delete(child);
      resolve({ code: null, signal: null });
    });
  });

  const url = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(`not ready after ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    const onData = () => {
      const m = READY.exec(out);
      if (!m || settled) return;
      cleanup();
      resolve(m[1]!);
    };
    function fail(why: string) {
      if (settled) return;
      cleanup();
      child.kill("SIGKILL");
      reject(new Error(`tollgate server ${why}\n--- stderr ---\n${err}\n--- stdout ---\n${out}`));
    }
    function cleanup() {
      settled = true;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
    }
    child.stdout!.on("data", onData);
    void exited.then(({ code, signal }) => fail(`exited before ready (code ${code}, signal ${signal})`));
  });

  registerServer({ url, child, stderr: () => err });
  return {
    url,
    dataDir,
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async kill(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill("SIGKILL"), opts.killGraceMs ?? 10_000);
        await exited;
        clearTimeout(timer);
      }
      return (await exited).code;
    },
  };
}
