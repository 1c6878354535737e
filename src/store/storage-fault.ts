// The classification only: pg-fault.ts needs no driver, so SQLite deployments never load `pg`.
import { pgStorageFault } from "./postgres/pg-fault.js";

/**
 * SQLite result codes that mean "the database cannot take this write (or read) right now": a lock
 * held by another process, a full disk, an I/O error. Nothing was applied (the statement or its
 * transaction rolled back), so the same operation may be tried again once the cause is gone.
 * better-sqlite3 reports extended codes (`SQLITE_IOERR_WRITE`, `SQLITE_BUSY_SNAPSHOT`), hence
 * the prefixes.
 */
const TRANSIENT = ["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL", "SQLITE_READONLY"];

/**
 * Whether `err` (or an error it wraps: LangGraph wraps some) is a storage fault: SQLite's codes
 * above, or PostgreSQL unreachable, restarting or out of resources (`pgStorageFault`).
 */
export function isStorageFault(err: unknown): boolean {
  return sqliteFault(err) || pgStorageFault(err);
}

function sqliteFault(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && TRANSIENT.some((c) => code === c || code.startsWith(`${c}_`))) return true;
  }
  return false;
}
