/**
 * The end-to-end suite on PostgreSQL: the vitest project "postgres" (vitest.config.ts) runs the
 * backend-neutral e2e files with `TOLLGATE_TEST_BACKEND=postgres`, and its global setup
 * (test/support/postgres-setup.ts) starts one throwaway cluster and puts its maintenance URL in
 * `TOLLGATE_TEST_PG_URL`. With both set, `startServer` gives each data dir a database of its own
 * (`DATABASE_URL`), and `openDb` reads that database instead of `<dataDir>/tollgate.db`.
 *
 * A data dir names its database (a hash of its path): a restart that passes the same `dataDir`
 * finds the same database, as it would find the same SQLite file.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import pg from "pg";

/** The value of `TOLLGATE_TEST_BACKEND` that switches the harness to PostgreSQL. */
export const PG_BACKEND = "postgres";

/** The cluster's maintenance URL when the harness runs on PostgreSQL, else undefined. */
export function pgTestClusterUrl(): string | undefined {
  if (process.env.TOLLGATE_TEST_BACKEND !== PG_BACKEND) return undefined;
  const url = process.env.TOLLGATE_TEST_PG_URL;
  if (!url) {
    throw new Error(
      "TOLLGATE_TEST_BACKEND=postgres but TOLLGATE_TEST_PG_URL is not set: the postgres project's global setup (test/support/postgres-setup.ts) did not run",
    );
  }
  return url;
}

/** The database a data dir's server uses: `tg_` and a hash of the dir's absolute path. */
export function pgDatabaseName(dataDir: string): string {
  return `tg_${createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 24)}`;
}

/** `clusterUrl` with its database replaced by `name`. */
function withDatabase(clusterUrl: string, name: string): string {
  const u = new URL(clusterUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The postgres:// URL of a data dir's database on the test cluster (which may not exist yet). */
export function pgDatabaseUrl(clusterUrl: string, dataDir: string): string {
  return withDatabase(clusterUrl, pgDatabaseName(dataDir));
}

/** duplicate_database, or the unique index on pg_database when two CREATEs race. */
const ALREADY_THERE = new Set(["42P04", "23505"]);

/** Creates the data dir's database if it is missing; returns its URL. */
export async function ensurePgDatabase(clusterUrl: string, dataDir: string): Promise<string> {
  const name = pgDatabaseName(dataDir);
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) {
      // template0: truly empty. The name is ours (hex), so it needs no quoting beyond the quotes.
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE template0`).catch((e: { code?: string }) => {
        if (!ALREADY_THERE.has(e.code ?? "")) throw e;
      });
    }
  } finally {
    await admin.end();
  }
  return withDatabase(clusterUrl, name);
}

/**
 * The synchronous side of `openDb` on PostgreSQL. A test reads the database between awaits and in
 * polling loops (`waitFor(() => db.rows(...).length === 1)`), so every call must return its rows
 * at once. One worker thread per test process holds the connections (node-postgres, async); the
 * caller posts a query and blocks in `Atomics.wait` until the worker has posted the answer
 * (`receiveMessageOnPort` reads it synchronously). A psql process per call would do the same in
 * ~50 ms instead of ~1 ms: too slow for a suite that takes a snapshot of six tables per request.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const pg = require(workerData.pgPath);
const clients = new Map();
parentPort.once("message", ({ port, signal }) => {
  const done = new Int32Array(signal);
  port.on("message", async (req) => {
    let reply;
    try {
      if (req.op === "open") {
        // Read-only, as the SQLite view is; a statement stuck behind a lock fails instead of hanging.
        const client = new pg.Client({
          connectionString: req.url,
          options: "-c default_transaction_read_only=on -c statement_timeout=20000",
          connectionTimeoutMillis: 10000,
        });
        client.on("error", () => {}); // a server that went away fails the next query instead
        await client.connect();
        clients.set(req.handle, client);
        reply = { ok: true };
      } else if (req.op === "close") {
        const client = clients.get(req.handle);
        clients.delete(req.handle);
        await client?.end().catch(() => {});
        reply = { ok: true };
      } else {
        const client = clients.get(req.handle);
        if (!client) throw new Error("The database connection is not open");
        const { rows } = await client.query(req.sql, req.params);
        reply = { ok: true, rows };
      }
    } catch (e) {
      reply = { ok: false, message: e && e.message ? e.message : String(e), code: e && e.code };
    }
    port.postMessage({ id: req.id, ...reply });
    Atomics.add(done, 0, 1); // after the post: a caller woken by this finds the answer queued
    Atomics.notify(done, 0);
  });
});
`;

const CALL_TIMEOUT_MS = 30_000;

interface SyncChannel {
  port: MessagePort;
  done: Int32Array;
  nextId: number;
}
let channel: SyncChannel | undefined;

function syncChannel(): SyncChannel {
  if (channel) return channel;
  const pgPath = createRequire(import.meta.url).resolve("pg");
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { pgPath } });
  worker.unref(); // it must not keep the test process alive
  const { port1, port2 } = new MessageChannel();
  const signal = new SharedArrayBuffer(4);
  worker.postMessage({ port: port2, signal }, [port2]);
  port1.unref();
  const ch: SyncChannel = { port: port1, done: new Int32Array(signal), nextId: 0 };
  // A worker that died takes its connections along: the next call starts a new one (a call
  // waiting on the dead one times out, naming its request).
  const forget = () => {
    if (channel === ch) channel = undefined;
  };
  worker.once("exit", forget);
  worker.on("error", forget);
  channel = ch;
  return ch;
}

interface Reply {
  id: number;
  ok: boolean;
  rows?: Record<string, unknown>[];
  message?: string;
  code?: string;
}

/** Posts `req` to the worker and blocks until its answer is there. */
function callSync(req: Record<string, unknown>): Reply {
  const ch = syncChannel();
  const id = ++ch.nextId;
  ch.port.postMessage({ ...req, id });
  const deadline = Date.now() + CALL_TIMEOUT_MS;
  for (;;) {
    // Read the counter before looking: an answer posted after the look moves it, and the wait returns.
    const seen = Atomics.load(ch.done, 0);
    const msg = receiveMessageOnPort(ch.port)?.message as Reply | undefined;
    if (msg?.id === id) return msg;
    if (msg) continue; // the late answer of a call that timed out
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`openDb (PostgreSQL): no answer in ${CALL_TIMEOUT_MS} ms to ${JSON.stringify(req)}`);
    Atomics.wait(ch.done, 0, seen, left);
  }
}

/** What `openDb` returns on PostgreSQL: the part of better-sqlite3's API the tests use, synchronous. */
export interface PgTestDb {
  readonly name: string;
  readonly open: boolean;
  readonly readonly: true;
  countRows(table: string): number;
  rows<T = Record<string, unknown>>(table: string, where?: string, ...params: unknown[]): T[];
  prepare(sql: string): { all(...params: unknown[]): unknown[]; get(...params: unknown[]): unknown };
  exec(sql: string): PgTestDb;
  close(): void;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** better-sqlite3's `?` placeholders (outside quotes) as PostgreSQL's `$1`, `$2`, … */
function bindParams(sql: string, params: unknown[]): { sql: string; values: unknown[] } {
  if (params.length === 1 && params[0] !== null && typeof params[0] === "object" && !Array.isArray(params[0])) {
    throw new Error("openDb (PostgreSQL): named parameters are not supported, pass them positionally");
  }
  const values = params.flat().map((v) => (v === undefined ? null : typeof v === "bigint" ? String(v) : v));
  let out = "";
  let quote: string | null = null;
  let n = 0;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "?") {
      out += `$${++n}`;
      continue;
    }
    out += ch;
  }
  if (n !== values.length) throw new Error(`openDb (PostgreSQL): ${values.length} params for ${n} placeholders in ${sql}`);
  return { sql: out, values };
}

let handles = 0;

/**
 * A read-only look into a data dir's PostgreSQL database with `openDb`'s synchronous API. Rows
 * come back through `json_agg`, so they look like better-sqlite3's: numbers (BIGINT, count,
 * SUM) as numbers, NULL as null, text as strings.
 */
export function openPgTestDb(clusterUrl: string, dataDir: string): PgTestDb {
  const url = pgDatabaseUrl(clusterUrl, dataDir);
  const handle = ++handles;
  let open = true;

  const call = (req: Record<string, unknown>, sql = ""): Record<string, unknown>[] => {
    const reply = callSync({ ...req, handle });
    if (!reply.ok) throw new Error(`openDb (PostgreSQL ${url}): ${reply.message}${sql ? `\n--- sql ---\n${sql}` : ""}`);
    return reply.rows ?? [];
  };

  const query = (sql: string, params: unknown[]): Record<string, unknown>[] => {
    if (!open) throw new TypeError("The database connection is not open");
    const bound = bindParams(sql.trim().replace(/;\s*$/, ""), params);
    const text = `SELECT coalesce(json_agg(t), '[]'::json)::text AS j FROM (${bound.sql}\n) t`;
    const [row] = call({ op: "query", sql: text, params: bound.values }, text);
    return JSON.parse(String(row!.j)) as Record<string, unknown>[];
  };

  const quoted = (table: string) => {
    if (!IDENT.test(table)) throw new Error(`openDb: not a table name: ${JSON.stringify(table)}`);
    return `"${table}"`;
  };

  // SQLite orders rows() by rowid (insertion order); here tables with an identity `id` (refunds,
  // outbox, audit) order by it, the others come in the order PostgreSQL reads them.
  const hasId = new Map<string, boolean>();
  const orderOf = (table: string) => {
    let has = hasId.get(table);
    if (has === undefined) {
      has = query("SELECT 1 AS x FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = 'id'", [table]).length > 0;
      hasId.set(table, has);
    }
    return has ? " ORDER BY id" : "";
  };

  // As better-sqlite3's fileMustExist: a data dir no server has used fails here.
  call({ op: "open", url });

  const db: PgTestDb = {
    name: url,
    get open() {
      return open;
    },
    readonly: true,
    countRows: (table) => Number(query(`SELECT count(*) AS n FROM ${quoted(table)}`, [])[0]!.n),
    rows: <T,>(table: string, where?: string, ...params: unknown[]) =>
      query(`SELECT * FROM ${quoted(table)}${where ? ` WHERE ${where}` : ""}${orderOf(table)}`, params) as T[],
    prepare: (sql) => ({
      all: (...params) => query(sql, params),
      get: (...params) => query(sql, params)[0],
    }),
    exec(sql) {
      if (!open) throw new TypeError("The database connection is not open");
      call({ op: "query", sql, params: [] }, sql);
      return db;
    },
    close() {
      if (!open) return;
      open = false;
      call({ op: "close" });
    },
  };
  return db;
}
