import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SCHEMA } from "./schema.js";

export type Db = Database.Database;

/** How long one statement waits for another process's lock before giving up. */
export const BUSY_TIMEOUT_MS = 50;

/** Opens (and creates) `$DATA_DIR/tollgate.db` with the settings every part relies on. */
export function openDatabase(dataDir: string): Db {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, "tollgate.db"));
  // WAL lets readers (replays, GET) proceed during writes; NORMAL syncs at checkpoints, which
  // survives a process kill (the case we promise) without an fsync per commit.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  // better-sqlite3 waits for a lock on the event loop: a long wait would freeze every client while
  // another process holds the file. Wait briefly, then report SQLITE_BUSY: writes that fail so are
  // retried off the hot path (event log, ledger, settler) or answered 503 storage_unavailable.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma("foreign_keys = ON");
  db.exec(SCHEMA);
  return db;
}
