/**
 * What a server does for everyone else while a load window runs: its health endpoint's round
 * trip, fetched every ~20 ms by a prober process of its own (health-prober.mjs), and its event
 * loop's lag, read inside its own processes (loop-lag.mjs). `open()`/`close()` go to
 * closedLoop's `onOpen`/`onClose`, so both cover exactly the measured window.
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { REPO_ROOT, type LoopLagReading } from "./processes.js";
import type { Target } from "./targets.js";

export interface HealthReading {
  /** Round trip of each GET sent inside the window that answered 200, ms. */
  ms: number[];
  errors: number;
  firstError: string | null;
  /** Connections the prober opened (1: its keep-alive connection held the whole time). */
  connections: number;
}

export interface WindowReading {
  health: HealthReading;
  /** Null when the target was not started with `loopLag`. */
  lag: LoopLagReading | null;
}

export interface WindowProbes {
  open(): void;
  close(): void;
  /** After closedLoop returns: both readings (waits for the answers still on their way). */
  result(): Promise<WindowReading>;
  /** Ends the prober if it is still running (on a failure). */
  kill(): void;
}

const PROBER = path.join(REPO_ROOT, "bench/health-prober.mjs");

/** Starts the prober on `target` (resolves once its first GET has answered) and returns the window's controls. */
export async function windowProbes(target: Target, everyMs = 20): Promise<WindowProbes> {
  const prober: ChildProcess = fork(PROBER, [target.child.url + target.healthPath, String(everyMs)], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise<void>((r) => prober.once("exit", () => r()));
  const samples = new Promise<HealthReading>((resolve, reject) => {
    prober.on("message", (m: { type: string } & HealthReading) => {
      if (m.type === "samples") resolve({ ms: m.ms, errors: m.errors, firstError: m.firstError, connections: m.connections });
    });
    void exited.then(() => reject(new Error(`the /healthz prober exited before sending its samples (${target.name})`)));
  });
  samples.catch(() => {}); // read in result()
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the /healthz prober got no answer from ${target.name} in 10 s`)), 10_000);
    prober.once("message", () => (clearTimeout(timer), resolve()));
    void exited.then(() => (clearTimeout(timer), reject(new Error("the /healthz prober exited"))));
  }).catch((err: unknown) => {
    prober.kill();
    throw err;
  });
  const lag = target.child.loopLag;
  let started: Promise<void> | undefined;
  let stopped: Promise<LoopLagReading> | undefined;
  return {
    open() {
      prober.send("open");
      started = lag?.start();
    },
    close() {
      prober.send("close");
      // A stop must follow its start's answer (a start still being read would be taken for it).
      if (lag) stopped = (started ?? Promise.resolve()).then(() => lag.stop());
    },
    async result() {
      const [health, reading] = await Promise.all([samples, stopped ?? Promise.resolve(null)]);
      return { health, lag: reading };
    },
    kill() {
      if (prober.exitCode === null && prober.signalCode === null) prober.kill();
    },
  };
}
