import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { ADDED_COLUMNS, LATE_INDEXES, SCHEMA } from "./schema.js";

export type Db = Database.Database;

/** How long a write waits for another process's lock before giving up, when none was seen lately. */
export const BUSY_TIMEOUT_MS = 50;
/** After a write found the lock held, later writes do not wait for it for this long. */
const LOCK_SEEN_WINDOW_MS = 500;

/** Opens (and creates) `$DATA_DIR/tollgate.db` with the settings every part relies on. */
export function openDatabase(dataDir: string): Db {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, "tollgate.db"));
  // WAL lets readers (replays, GET) proceed during writes; NORMAL syncs at checkpoints, which
  // survives a process kill (the case we promise) without an fsync per commit.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma("foreign_keys = ON");
  db.exec(SCHEMA);
  addMissingColumns(db);
  failFastWhileLocked(db);
  return db;
}

/** Brings a database made by an older version up to the current tables. */
function addMissingColumns(db: Db): void {
  db.transaction(() => {
    for (const { table, column, definition } of ADDED_COLUMNS) {
      const has = db.prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all().some((c) => c.name === column);
      if (!has) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
    }
    db.exec(LATE_INDEXES);
  }).immediate(); // the write lock first: a read then an ALTER could race another process starting

}

/**
 * better-sqlite3 waits for a lock on the event loop, so every client waits with it. A short wait
 * absorbs another process's brief write (LangGraph Studio's demo tools share this file); but
 * while the lock stays held, each blocked write would stall the loop again, and a burst of them
 * (every stream ending at once) stalled it for seconds (measured: /healthz up to 4 s behind a
 * 5 s lock with 10 streams). So once a write finds the lock held, writes stop waiting until none
 * has for `LOCK_SEEN_WINDOW_MS`: they fail at once with SQLITE_BUSY, and their callers retry off
 * the hot path (event log, ledger, settler) or answer 503 storage_unavailable.
 */
function failFastWhileLocked(db: Db): void {
  let window: NodeJS.Timeout | undefined;
  const sawLock = () => {
    if (!window) db.pragma("busy_timeout = 0");
    clearTimeout(window);
    window = setTimeout(() => {
      window = undefined;
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }, LOCK_SEEN_WINDOW_MS);
    window.unref();
  };
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const stmt = prepare(source);
    if (stmt.reader) return stmt; // readers are not blocked by a writer in WAL mode
    const run = stmt.run.bind(stmt);
    stmt.run = ((...params: unknown[]) => {
      try {
        return run(...params);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) sawLock();
        throw err;
      }
    }) as typeof stmt.run;
    return stmt;
  }) as typeof db.prepare;
}
