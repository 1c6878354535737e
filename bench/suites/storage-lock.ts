/**
 * What another process holding the database's write lock costs everyone else (issue 11: "no
 * event-loop stall of seconds from one blocked write"). In-process tollgate on a socket, 10
 * streams on the bench's model; a second connection holds `BEGIN IMMEDIATE` for 5 s (2 s quick)
 * while /healthz is fetched every 20 ms. The runs' writes are refused meanwhile (their streams
 * end `storage_unavailable` and are settled after); the figure is how long /healthz waited.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/logger.js";
import { createTollgate } from "../../src/index.js";
import type { BenchContext, Row } from "../context.js";
import { directive } from "../directive.js";
import { dist } from "../stats.js";

const STREAMS = 10;

export async function storageLockSuite(ctx: BenchContext): Promise<Row[]> {
  ctx.focus(null);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-bench-lock-"));
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY", OPENAI_BASE_URL: `${ctx.model.url}/v1` });
  const tg = await createTollgate({ config, log: silentLogger });
  const server = serve({ fetch: tg.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((r) => server.once("listening", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const holdMs = ctx.settings.mode === "quick" ? 2000 : 5000;
  try {
    // Streams long enough to be writing tokens the whole time the lock is held.
    const runs = Array.from({ length: STREAMS }, () =>
      fetch(`${base}/threads/lock-${randomUUID()}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: directive({ tokens: Math.ceil(holdMs / 5) + 200, delay: 5 }), on_disconnect: "continue" }),
      }).then((r) => r.text()),
    );
    await new Promise((r) => setTimeout(r, 300));
    const lock = new Database(path.join(dataDir, "tollgate.db"), { timeout: 5000 });
    lock.exec("BEGIN IMMEDIATE");
    const waits: number[] = [];
    const end = Date.now() + holdMs;
    while (Date.now() < end) {
      const t = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.text());
      waits.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
    lock.exec("ROLLBACK");
    lock.close();
    await Promise.all(runs);
    const d = dist(waits);
    ctx.log(`  /healthz while locked: n=${d.n} p50=${d.p50.toFixed(1)} p99=${d.p99.toFixed(1)} max=${d.max.toFixed(1)} ms`);
    const row = (figure: string, value: number): Row => ({ group: "storage faults", figure, unit: "ms", better: "lower", values: { tollgate: value } });
    return [
      row(`/healthz p50 while another process holds the write lock, ${STREAMS} streams`, d.p50),
      row(`/healthz p99 while another process holds the write lock, ${STREAMS} streams`, d.p99),
      row(`/healthz max while another process holds the write lock, ${STREAMS} streams`, d.max),
    ];
  } finally {
    server.close();
    await tg.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
