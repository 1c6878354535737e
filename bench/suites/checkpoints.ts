/**
 * Figure 6: the cost of length. One thread grows turn by turn (a user message and a short
 * answer) on an in-process tollgate with its own database. The checkpointer's `put` and
 * `putWrites` are timed where the graph calls them; at each milestone the suite averages the
 * last turns (enough of them to include the periodic full snapshots a delta channel writes):
 * - checkpoint write time per step: time in put + putWrites, per checkpoint written;
 * - database bytes per step: checkpoint + write rows added, per checkpoint;
 * - run time per turn: wall time of a whole turn, model call and state loading included.
 * TOLLGATE only: FLOOR keeps no state and PEER's checkpointer is in memory.
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

const WINDOW = 25; // turns averaged at each milestone

interface Milestone {
  turns: number;
  writeMsPerStep: number;
  bytesPerStep: number;
  turnMs: number;
  steps: number;
  dbFileBytes: number;
}

export async function checkpointSuite(ctx: BenchContext): Promise<Row[]> {
  ctx.focus(null); // in-process: the servers sleep
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-bench-ckpt-"));
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY", OPENAI_BASE_URL: `${ctx.model.url}/v1` });
  const tg = await createTollgate({ config, log: silentLogger });
  const db = sqliteOf(tg.store);
  const saver = tg.store.checkpointer;
  // Time the checkpointer where the graph calls it (both methods are almost all synchronous work).
  let writeUs = 0;
  let puts = 0;
  const put = saver.put.bind(saver);
  const putWrites = saver.putWrites.bind(saver);
  saver.put = async (...a: Parameters<typeof put>) => {
    const t = nowUs();
    try {
      return await put(...a);
    } finally {
      writeUs += nowUs() - t;
      puts++;
    }
  };
  saver.putWrites = async (...a: Parameters<typeof putWrites>) => {
    const t = nowUs();
    try {
      return await putWrites(...a);
    } finally {
      writeUs += nowUs() - t;
    }
  };
  const threadId = `grow-${randomUUID()}`;
  // Prepared at first use: the saver's tables may only exist once it has written.
  const totals = (id: string) =>
    db
      .prepare<{ id: string }, { bytes: number }>(
        `SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints WHERE thread_id = @id)
              + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = @id) AS bytes`,
      )
      .get({ id })!.bytes;
  const marks = ctx.settings.checkpoints.turns;
  const milestones: Milestone[] = [];
  try {
    // Warm the code paths first (JIT), on a thread of its own, so turn 10 is not measured cold.
    for (let i = 0; i < 30; i++) await (await tg.runs.startMessage(ANONYMOUS, { threadId: `warm-${randomUUID()}`, message: directive({ tokens: 8 }) })).done;
    writeUs = 0;
    puts = 0;
    let from = { turn: 1, bytes: 0, writeUs: 0, puts: 0, at: nowUs() };
    for (let turn = 1; turn <= Math.max(...marks); turn++) {
      if (marks.some((m) => turn === Math.max(2, m - WINDOW + 1))) from = { turn, bytes: totals(threadId), writeUs, puts, at: nowUs() };
      const run = await tg.runs.startMessage(ANONYMOUS, { threadId, message: directive({ tokens: 8 }) });
      await run.done;
      if (run.outcome !== "completed") throw new Error(`turn ${turn} ended ${run.outcome}`);
      if (!marks.includes(turn)) continue;
      const steps = Math.max(1, puts - from.puts);
      const m: Milestone = {
        turns: turn,
        writeMsPerStep: (writeUs - from.writeUs) / 1000 / steps,
        bytesPerStep: (totals(threadId) - from.bytes) / steps,
        turnMs: (nowUs() - from.at) / 1000 / (turn - from.turn + 1),
        steps,
        dbFileBytes: (db.pragma("page_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number),
      };
      milestones.push(m);
      ctx.log(`  turn ${turn}: ${m.writeMsPerStep.toFixed(2)} ms and ${Math.round(m.bytesPerStep)} B per step, ${m.turnMs.toFixed(1)} ms per turn`);
    }
  } finally {
    await tg.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return rows(milestones);
}

function rows(ms: Milestone[]): Row[] {
  const first = ms[0]!;
  const out: Row[] = [];
  for (const [i, m] of ms.entries()) {
    const at = `turn ${m.turns}`;
    const write: Row = { group: "cost of length", figure: `checkpoint write per step, ${at}`, unit: "ms", better: "lower", values: { tollgate: m.writeMsPerStep }, detail: { ...m } };
    const bytes: Row = { group: "cost of length", figure: `DB bytes per step, ${at}`, unit: "B", better: "lower", values: { tollgate: m.bytesPerStep } };
    const turn: Row = { group: "cost of length", figure: `run time per turn, ${at}`, unit: "ms", better: "lower", values: { tollgate: m.turnMs } };
    if (i === ms.length - 1 && i > 0) {
      write.target = { text: `≤ 2× turn ${first.turns}`, met: m.writeMsPerStep <= 2 * first.writeMsPerStep };
      bytes.target = { text: `≤ 2× turn ${first.turns}`, met: m.bytesPerStep <= 2 * first.bytesPerStep };
    }
    out.push(write, bytes, turn);
  }
  return out;
}
