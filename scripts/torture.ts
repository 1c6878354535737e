/**
 * Crash torture: N kill -9s of a real tollgate process around approvals and mid-run, each followed
 * by a restart on the same database, with the invariants checked after every restart:
 * - nothing ran twice, nothing ran without an approval naming it;
 * - no thread is left `running`; every run row is closed and its log ends with exactly one
 *   terminal event;
 * - every FULL_CHECK_EVERY kills (and at the end), each thread is sent a message on the strict
 *   model: the history it gets is valid, holds every call the ledger says ran (with its result),
 *   and everything GET showed; the run ends `done`.
 * Half the kills land at an exact write of a run (test/helpers/kill-point.mjs, a random point and
 * occurrence), half at a random moment.
 *
 *   npm run torture                      # 200 kills, seed 1
 *   npm run torture -- --kills 20 --seed 3
 *
 * Exit code 1 when any invariant was broken. `test/e2e/torture.test.ts` runs a few kills.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TollgateClient } from "../src/client/index.js";
import { startFakeOpenAI, type Turn } from "../test/helpers/fake-openai.js";
import { checkDatabase, checkInvariants, type Violation } from "../test/helpers/invariants.js";
import { orderScript } from "../test/helpers/order-script.js";
import { mulberry32 } from "../test/helpers/random.js";
import { type ServerProcess, startServer } from "../test/helpers/server-process.js";
import { openDb } from "../test/helpers/sqlite.js";

export interface TortureOptions {
  kills: number;
  seed: number;
  /** Threads the workload spreads over. */
  threads?: number;
}

export interface TortureReport {
  kills: number;
  /** Kills that landed at an exact write, by point; the rest were at a random moment. */
  atPoints: Record<string, number>;
  atRandom: number;
  violations: Violation[];
  refunds: number;
}

const POINTS = ["checkpoint:before", "checkpoint:after", "writes:after", "ledger-claim:after", "ledger-settle:after", "interrupt:before", "terminal:before", "terminal:after", "release:after", "events:after"];
const FULL_CHECK_EVERY = 10;
const LONG = Array.from({ length: 30 }, (_, i) => `part${i}`).join(" ");

export async function runTorture(o: TortureOptions): Promise<TortureReport> {
  const random = mulberry32(o.seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  // Slow enough that a kill can land mid-answer; tool results get a longer answer.
  const model = await startFakeOpenAI({
    delayMs: 3,
    script: (req): Turn => (req.messages.at(-1)?.role === "tool" || String(req.messages.at(-1)?.content).startsWith("talk") ? { text: LONG } : orderScript(req)),
  });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-torture-"));
  const env = { MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url };
  const ids = Array.from({ length: o.threads ?? 6 }, (_, i) => `t${i}`);
  const report: TortureReport = { kills: 0, atPoints: {}, atRandom: 0, violations: [], refunds: 0 };
  let server: ServerProcess | undefined;
  try {
    for (let k = 0; k < o.kills; k++) {
      const atPoint = random() < 0.5;
      const point = pick(POINTS);
      server = await startServer(atPoint ? { ...env, TOLLGATE_KILL_AT: point, TOLLGATE_KILL_NTH: String(1 + Math.floor(random() * 4)) } : env, { dataDir });
      const died = server.exited.then(() => true);
      const work = workload(new TollgateClient({ baseUrl: server.url, reconnect: { retries: 0 } }), ids, random, died);
      if (atPoint) {
        // The point may never come in this workload: then a random kill stands in for it.
        const landed = await Promise.race([died, work.then(() => false)]);
        if (landed) report.atPoints[point] = (report.atPoints[point] ?? 0) + 1;
        else report.atRandom++;
      } else {
        await new Promise((r) => setTimeout(r, random() * 400));
        report.atRandom++;
      }
      await server.kill("SIGKILL");
      await work;
      report.kills++;

      server = await startServer(env, { dataDir });
      const db = openDb(dataDir);
      try {
        const full = (k + 1) % FULL_CHECK_EVERY === 0 || k === o.kills - 1;
        const found = full ? await checkInvariants(server.url, db, model) : checkDatabase(db);
        for (const v of found) report.violations.push({ ...v, detail: `after kill ${k + 1}: ${v.detail}` });
        report.refunds = db.countRows("refunds");
      } finally {
        db.close();
        await server.kill();
      }
    }
    return report;
  } finally {
    await server?.kill("SIGKILL");
    await model.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Messages, approvals, rejections and cancels on every thread at once, until the server dies. */
async function workload(client: TollgateClient, ids: string[], random: () => number, died: Promise<boolean>): Promise<void> {
  let dead = false;
  void died.then(() => (dead = true));
  await Promise.all(
    ids.map(async (id) => {
      for (let step = 0; step < 4 && !dead; step++) {
        try {
          const view = await client.getThread(id).catch(() => undefined);
          const r = random();
          if (view?.pending) {
            if (r < 0.15) await client.cancel(id);
            else await client.resume(id, view.pending.interrupt_id, { decisions: view.pending.calls.map((c) => ({ call_id: c.call_id, approved: r < 0.8 })) }).collect();
          } else {
            const message = r < 0.5 ? "refund A-1001 5 cents" : r < 0.8 ? "where is A-1002" : "talk to me";
            const stream = client.run(id, message);
            if (random() < 0.1) setTimeout(() => void client.cancel(id).catch(() => undefined), random() * 100);
            await stream.collect();
          }
        } catch {
          // refused (busy, waiting) or cut off by the kill: the next step or the restart deals with it
        }
      }
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, def: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : def;
  };
  const started = Date.now();
  const report = await runTorture({ kills: arg("kills", 200), seed: arg("seed", 1) });
  console.log(JSON.stringify({ ...report, violations: report.violations.slice(0, 20) }, null, 2));
  console.log(`${report.kills} kills (${report.kills - report.atRandom} at exact writes), ${report.violations.length} violations, ${report.refunds} refunds, ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(report.violations.length === 0 ? 0 : 1);
}
