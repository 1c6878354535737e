/**
 * A read-only look into a tollgate data dir's database, for asserting side effects
 * (rows in `refunds`, `outbox`, …) from tests while the server may still be running.
 * In the PostgreSQL test mode (test/helpers/pg-test-db.ts) `openDb` reads the data dir's
 * PostgreSQL database instead, through the same synchronous API.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { openPgTestDb, pgTestClusterUrl } from "./pg-test-db.js";

export interface TestDb extends Database.Database {
  /** `SELECT count(*)` of a table. */
  countRows(table: string): number;
  /** All rows of a table in insertion (rowid) order, optionally filtered by a `WHERE` clause with params. */
  rows<T = Record<string, unknown>>(table: string, where?: string, ...params: unknown[]): T[];
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Opens `<dataDir>/tollgate.db` read-only. Readonly keeps a test from ever taking the write lock
 * the server needs; the busy timeout rides out the server's own checkpoints. Close it when done.
 * In the PostgreSQL test mode: the data dir's database, with `countRows`, `rows`,
 * `prepare(sql).all/get`, `exec` and `close` (the rest of better-sqlite3's API throws).
 */
export function openDb(dataDir: string): TestDb {
  const clusterUrl = pgTestClusterUrl();
  if (clusterUrl) return onlyWhatPgHas(openPgTestDb(clusterUrl, dataDir));
  const db = new Database(path.join(dataDir, "tollgate.db"), { readonly: true, fileMustExist: true, timeout: 5000 });
  const quoted = (table: string) => {
    // Table names cannot be bound as parameters, so refuse anything that is not a plain identifier.
    if (!IDENT.test(table)) throw new Error(`openDb: not a table name: ${JSON.stringify(table)}`);
    return `"${table}"`;
  };
  return Object.assign(db, {
    countRows: (table: string) =>
      (db.prepare(`SELECT count(*) AS n FROM ${quoted(table)}`).get() as { n: number }).n,
    rows: <T,>(table: string, where?: string, ...params: unknown[]) =>
      // ORDER BY rowid fails on WITHOUT ROWID tables; those are not expected here.
      db.prepare(`SELECT * FROM ${quoted(table)}${where ? ` WHERE ${where}` : ""} ORDER BY rowid`).all(...params) as T[],
  }) as TestDb;
}

/** A PostgreSQL view typed as a TestDb: a better-sqlite3 member it lacks throws instead of being undefined. */
function onlyWhatPgHas(db: object): TestDb {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop in target || typeof prop !== "string" || !(prop in Database.prototype)) return Reflect.get(target, prop, receiver);
      throw new Error(`openDb: ${prop} is not available on PostgreSQL (TOLLGATE_TEST_BACKEND=postgres)`);
    },
  }) as TestDb;
}

/** The connection of a SQLite-backed store (a test that writes rows by hand needs one). */
export function sqliteOf(store: { kind: string; db?: Database.Database }): Database.Database {
  if (store.kind !== "sqlite" || !store.db) throw new Error("this test needs the SQLite store");
  return store.db;
}
