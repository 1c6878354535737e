import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SCHEMA } from "./schema.js";

export type Db = Database.Database;

/** Opens (and creates) `$DATA_DIR/tollgate.db` with the settings every part relies on. */
export function openDatabase(dataDir: string): Db {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new Database(path.join(dataDir, "tollgate.db"));
  // WAL lets readers (replays, GET) proceed during writes; NORMAL syncs at checkpoints, which
  // survives a process kill (the case we promise) without an fsync per commit.
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.exec(SCHEMA);
  return db;
}
