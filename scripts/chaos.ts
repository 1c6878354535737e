/**
 * Chaos run: N runs on a real tollgate process against a model server that randomly stalls, cuts,
 * errors and misbehaves, with random cancels, disconnects and decisions. Then it counts threads
 * left stuck: `running` with no run in flight, an invalid Chat Completions history, or a thread
 * that no longer completes a plain message. The model server is OpenAI-strict, so every invalid
 * history tollgate ever sends it is counted too.
 *
 *   npm run chaos                       # 200 runs, 20 threads, seed 1
 *   npm run chaos -- --runs 1000 --seed 7
 *
 * Exit code 1 when anything was left stuck. `test/e2e/chaos.test.ts` runs a smaller one.
 */
import { TollgateClient, TollgateError } from "../src/client/index.js";
import type { ProtocolEvent, ThreadView } from "../src/protocol/index.js";
import { historyProblem, startFakeOpenAI, type Turn } from "../test/helpers/fake-openai.js";
import { mulberry32 } from "../test/helpers/random.js";
import { startServer } from "../test/helpers/server-process.js";

export interface ChaosOptions {
  runs: number;
  threads: number;
  seed: number;
}

export interface ChaosReport {
  runs: number;
  /** How the runs ended: terminal event type, `disconnected`, or the HTTP error code. */
  outcomes: Record<string, number>;
  /** `running` after everything settled, with nothing in flight. */
  stuckRunning: string[];
  /** Stored histories a Chat Completions server would refuse. */
  invalidHistories: string[];
  /** Threads where a plain message afterwards did not end `done`. */
  unusable: string[];
  /** Runs that had not ended after `RUN_DEADLINE_MS` (their client then left). */
  hung: number;
  /** Model requests the strict model server refused as invalid histories. */
  invalidRequests: number;
  /** Stack traces in the server's log. */
  stackTraces: number;
}

/** Runs the chaos and reports; starts and stops its own model server and tollgate process. */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  let probing = false;
  // What the model does is a function of the seed and the request itself, not of which request
  // happened to arrive first: the same conversation gets the same misbehaviour in every run.
  const model = await startFakeOpenAI({
    delayMs: 2,
    script: (req) => (probing ? { text: "All good." } : misbehave(mulberry32(o.seed ^ hash(JSON.stringify(req.messages))))),
  });
  const server = await startServer({
    MODEL: "chaos",
    OPENAI_API_KEY: "k",
    OPENAI_BASE_URL: model.url,
    MODEL_FIRST_TOKEN_TIMEOUT_SECONDS: "0.3",
    MODEL_IDLE_TIMEOUT_SECONDS: "0.2",
  });
  const client = new TollgateClient({ baseUrl: server.url, reconnect: { retries: 0 } });
  const outcomes: Record<string, number> = {};
  const count = (k: string) => (outcomes[k] = (outcomes[k] ?? 0) + 1);
  const ids = Array.from({ length: o.threads }, (_, i) => `chaos-${o.seed}-${i}`);
  try {
    // Each thread has its own generator, so its choices do not depend on the others' timing.
    const perThread = Math.ceil(o.runs / o.threads);
    let started = 0;
    await Promise.all(
      ids.map(async (id, i) => {
        const random = mulberry32(o.seed * 1000 + i);
        for (let n = 0; n < perThread && started < o.runs; n++) {
          started++;
          count(await oneRun(client, id, random));
        }
      }),
    );
    probing = true;
    const report: ChaosReport = {
      runs: started,
      outcomes,
      stuckRunning: [],
      invalidHistories: [],
      unusable: [],
      hung: outcomes.hung ?? 0,
      invalidRequests: 0,
      stackTraces: 0,
    };
    for (const id of ids) {
      // Cancel answers once the thread has settled; a thread still `running` then has no run.
      if ((await client.cancel(id)).status === "running") report.stuckRunning.push(id);
      if (historyProblem(wire(await client.getThread(id)))) report.invalidHistories.push(id);
      const probe = await client.run(id, "final check").collect().catch(() => []);
      if (probe.at(-1)?.type !== "done") report.unusable.push(id);
    }
    report.invalidRequests = model.requests.filter((r) => r.invalid).length;
    // The log is JSON lines on stdout: a stack there is in an escaped string (`\n    at …`).
    report.stackTraces = ((server.stderr() + server.stdout()).match(/(\n|\\n)\s+at .+:\d+:\d+\)?/g) ?? []).length;
    return report;
  } finally {
    await server.kill();
    await model.close();
  }
}

const RUN_DEADLINE_MS = 10_000;

/** What the model does with one request. */
function misbehave(random: () => number): Turn {
  const pick = <T>(weighted: Array<[number, T]>): T => {
    let r = random() * weighted.reduce((a, [w]) => a + w, 0);
    for (const [w, v] of weighted) if ((r -= w) < 0) return v;
    return weighted.at(-1)![1];
  };
  const refund = { name: "refund_order", args: { order_id: "A-1001", amount_cents: 1, reason: "chaos" } };
  const lookup = { name: "lookup_order", args: { order_id: "A-1002" } };
  return pick<Turn>([
    [25, { text: "Here is a plain answer in several words." }],
    [12, { toolCalls: [lookup] }],
    [10, { toolCalls: [lookup, refund] }],
    [5, { toolCalls: [lookup], noIndex: true }],
    [5, { toolCalls: [{ name: "", args: { x: 1 } }] }],
    [6, { stall: true }],
    [6, { keepAlive: true, everyMs: 20 }],
    [6, { keepAlive: true, text: "Half an", everyMs: 20 }],
    [6, { truncated: true, text: "Cut off in the mid" }],
    [6, { status: 500 }],
    [4, { status: 502, body: "<html><body>Bad Gateway</body></html>" }],
    [4, { garbage: "not json at all" }],
    [5, { hang: true, text: "Hanging" }],
  ]);
}

/** One run on the thread: a message, or a decision on its open interrupt; maybe cancelled or dropped. */
async function oneRun(client: TollgateClient, id: string, random: () => number): Promise<string> {
  try {
    const view = await client.getThread(id).catch(() => undefined);
    const pending = view?.pending;
    if (pending && random() < 0.25) {
      await client.cancel(id);
      return "cancelled waiting";
    }
    const stream = pending
      ? client.resume(id, pending.interrupt_id, { decisions: pending.calls.map((c) => ({ call_id: c.call_id, approved: random() < 0.5 })) })
      : client.run(id, `refund A-1001 please (${Math.floor(random() * 1e6)})`);
    const r = random();
    if (r < 0.15) setTimeout(() => void client.cancel(id).catch(() => undefined), random() * 300);
    // Every misbehaviour here ends within a second with the timeouts set above; longer is a hang.
    let hung = false;
    const deadline = setTimeout(() => ((hung = true), stream.stop()), RUN_DEADLINE_MS);
    const events: ProtocolEvent[] = [];
    try {
      for await (const e of stream) {
        events.push(e);
        if (r > 0.9) {
          stream.stop(); // the client goes away mid-run
          return "disconnected";
        }
      }
    } finally {
      clearTimeout(deadline);
    }
    return hung ? "hung" : (events.at(-1)?.type ?? "no events");
  } catch (err) {
    return err instanceof TollgateError ? `http ${err.code}` : "client error";
  }
}

/** A thread's messages as Chat Completions would receive them. */
function wire(view: ThreadView): unknown[] {
  return view.messages.map((m) =>
    m.role === "assistant"
      ? {
          role: "assistant",
          content: m.content,
          ...(m.tool_calls?.length
            ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } })) }
            : {}),
        }
      : m.role === "tool"
        ? { role: "tool", tool_call_id: m.tool_call_id, content: m.content }
        : { role: "user", content: m.content },
  );
}

/** A 32-bit FNV-1a hash, to seed a request's choices from its content. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Threads left unusable, in all: must be 0. */
export function stuckCount(r: ChaosReport): number {
  return new Set([...r.stuckRunning, ...r.invalidHistories, ...r.unusable]).size;
}

/** Whether the run found nothing wrong. */
export function clean(r: ChaosReport): boolean {
  return stuckCount(r) === 0 && r.hung === 0 && r.invalidRequests === 0 && r.stackTraces === 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, def: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : def;
  };
  const report = await runChaos({ runs: arg("runs", 200), threads: arg("threads", 20), seed: arg("seed", 1) });
  console.log(JSON.stringify(report, null, 2));
  console.log(
    `threads left stuck: ${stuckCount(report)}; runs hung: ${report.hung}; ` +
      `invalid histories sent to the model: ${report.invalidRequests}; stack traces logged: ${report.stackTraces}`,
  );
  process.exit(clean(report) ? 0 : 1);
}
