/**
 * The run-event log's share of a token's cost (issue 5: "writes are batched so the log costs
 * little per token"). In-process tollgate on the bench's model; long runs (1000 tokens each);
 * the store's batch writer is timed where the persister calls it:
 * - event log write time per token event: time in those writes ÷ events logged;
 * - event log rows per run: database rows (one per flush) a 1000-token run adds;
 * - event log bytes per token event: bytes of those rows ÷ events.
 */
import { randomUUID } from "node:crypto";
import { ANONYMOUS } from "../../src/auth/index.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/logger.js";
import { createTollgate } from "../../src/index.js";
import { nowUs } from "../clock.js";
import type { BenchContext, Row } from "../context.js";
import { directive } from "../directive.js";
import { sqliteOf } from "../../test/helpers/sqlite.js";

const TOKENS = 1000;

export async function eventLogSuite(ctx: BenchContext): Promise<Row[]> {
  ctx.focus(null);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-bench-log-"));
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY", OPENAI_BASE_URL: `${ctx.model.url}/v1` });
  const tg = await createTollgate({ config, log: silentLogger });
  const runs = ctx.settings.mode === "quick" ? 3 : 10;
  let writeUs = 0;
  let events = 0;
  const appendBatches = tg.store.runs.appendBatches.bind(tg.store.runs);
  tg.store.runs.appendBatches = async (batches) => {
    const t = nowUs();
    try {
      await appendBatches(batches);
    } finally {
      writeUs += nowUs() - t;
      for (const list of batches.values()) events += list.length;
    }
  };
  const stats = sqliteOf(tg.store).prepare<[], { rows: number; bytes: number }>(
    "SELECT COUNT(*) AS rows, COALESCE(SUM(LENGTH(frames)), 0) AS bytes FROM run_event_batches",
  );
  try {
    for (let i = 0; i < 3; i++) await (await tg.runs.startMessage(ANONYMOUS, { threadId: `warm-${randomUUID()}`, message: directive({ tokens: 50 }) })).done;
    const before = stats.get()!;
    writeUs = 0;
    events = 0;
    for (let i = 0; i < runs; i++) {
      const run = await tg.runs.startMessage(ANONYMOUS, { threadId: `log-${randomUUID()}`, message: directive({ tokens: TOKENS }) });
      await run.done;
      if (run.outcome !== "completed") throw new Error(`run ended ${run.outcome}`);
    }
    const after = stats.get()!;
    const perToken = writeUs / events;
    ctx.log(`  ${events} events in ${after.rows - before.rows} rows, ${perToken.toFixed(2)} µs of log writing per event`);
    const row = (figure: string, unit: string, value: number): Row => ({ group: "event log", figure, unit, better: "lower", values: { tollgate: value } });
    return [
      row("event log write time per token event", "µs", perToken),
      row(`event log rows per ${TOKENS}-token run`, "rows", (after.rows - before.rows) / runs),
      row("event log bytes per token event", "B", (after.bytes - before.bytes) / events),
    ];
  } finally {
    await tg.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
