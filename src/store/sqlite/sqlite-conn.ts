import type { ConnectionLock } from "./connection-lock.js";
import type { Db } from "./database.js";

/** The process's one SQLite connection and the lock that keeps transactions on it whole. */
export interface SqliteConn {
  db: Db;
  lock: ConnectionLock;
}
