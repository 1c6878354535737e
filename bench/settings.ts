/** How much of everything one bench run does: `--quick` for CI's smoke check, full otherwise. */
export interface Settings {
  mode: "quick" | "full";
  /** Run only these suites (streaming, sdk, latency, resume, cancel, checkpoints, eventlog, lock, memory, replicas). */
  only?: string[];
  /**
   * langgraph dev's `--n-jobs-per-worker` (its own default is 10): by default the most streams
   * any suite runs at once (full 200, quick 50), so PEER runs every stream at once as FLOOR and
   * TOLLGATE do instead of queueing them; `--peer-jobs N` sets it.
   */
  peerJobs: number;
  /** `firstGapMs`: the model's pause after the first token (see directive.ts); `drainMs`: how long runs left at the window's end may finish. */
  streaming: { concurrencies: number[]; tokens: number; firstGapMs: number; rampMs: number; windowMs: number; drainMs: number; reps: number; warmupMs: number };
  /** Tokens paced `delayMs` apart, so each arrives alone and its transit time can be read. */
  paced: { concurrencies: number[]; tokens: number; delayMs: number; rampMs: number; windowMs: number; reps: number };
  resume: { count: number };
  cancel: { count: number; block: number };
  checkpoints: { turns: number[] };
  /** `settleMs`: quiet time before each RSS reading (PEER saves its store 3 s after a change). */
  memory: { waiting: number[]; openStreams: number; creationBudgetMs: number; settleMs: number };
  /**
   * Each configuration (SQLite, PostgreSQL ×1, ×2): closed-loop load of short runs (`tokens` each,
   * the first `firstGapMs` ahead of the rest) at `concurrency`, then `cancels` cancels one at a
   * time (spread over the `reps` repetitions).
   */
  replicas: { concurrency: number; tokens: number; firstGapMs: number; warmupMs: number; rampMs: number; windowMs: number; drainMs: number; reps: number; cancels: number };
}

type Defaults = Omit<Settings, "peerJobs">;

const full: Defaults = {
  mode: "full",
  streaming: { concurrencies: [1, 50, 200], tokens: 100, firstGapMs: 5, rampMs: 3000, windowMs: 8000, drainMs: 20_000, reps: 2, warmupMs: 3000 },
  paced: { concurrencies: [1, 50], tokens: 50, delayMs: 10, rampMs: 1000, windowMs: 3000, reps: 2 },
  resume: { count: 100 },
  cancel: { count: 200, block: 10 },
  checkpoints: { turns: [10, 100, 500] },
  memory: { waiting: [1, 1000, 10000], openStreams: 200, creationBudgetMs: 180_000, settleMs: 4000 },
  replicas: { concurrency: 32, tokens: 8, firstGapMs: 5, warmupMs: 3000, rampMs: 2000, windowMs: 8000, drainMs: 10_000, reps: 2, cancels: 200 },
};

const quick: Defaults = {
  mode: "quick",
  streaming: { concurrencies: [1, 50], tokens: 100, firstGapMs: 5, rampMs: 1000, windowMs: 1500, drainMs: 2000, reps: 1, warmupMs: 1000 },
  paced: { concurrencies: [1, 50], tokens: 20, delayMs: 10, rampMs: 200, windowMs: 1000, reps: 1 },
  resume: { count: 10 },
  cancel: { count: 20, block: 10 },
  checkpoints: { turns: [10, 30] },
  memory: { waiting: [1, 100], openStreams: 50, creationBudgetMs: 15_000, settleMs: 1000 },
  replicas: { concurrency: 16, tokens: 8, firstGapMs: 5, warmupMs: 1000, rampMs: 500, windowMs: 2000, drainMs: 2000, reps: 1, cancels: 20 },
};

/** `--quick`, `--peer-jobs N`, `--only a,b`. */
export function parseArgs(argv: readonly string[]): Settings {
  const { mode, ...d } = structuredClone(argv.includes("--quick") ? quick : full);
  const mostAtOnce = Math.max(...d.streaming.concurrencies, ...d.paced.concurrencies, d.memory.openStreams);
  const s: Settings = { mode, peerJobs: mostAtOnce, ...d };
  const jobs = argv.indexOf("--peer-jobs");
  if (jobs >= 0) s.peerJobs = Number(argv[jobs + 1]) || s.peerJobs;
  const only = argv.indexOf("--only");
  if (only >= 0) s.only = (argv[only + 1] ?? "").split(",").filter(Boolean);
  return s;
}
