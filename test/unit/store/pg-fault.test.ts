import { type EventEmitter, once } from "node:events";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgStorageFault } from "../../../src/store/postgres/pg-fault.js";
import { createPgPool } from "../../../src/store/postgres/pg-pool.js";
import { assertPostgresAvailable, type PgCluster, postgresAvailable, skipPostgresSuite, startPostgres } from "../../helpers/postgres.js";

/** What pg's DatabaseError looks like to a caller: a message and a SQLSTATE code. */
const dbError = (code: string, message = "x") => Object.assign(new Error(message), { code });

describe("pgStorageFault", () => {
  it.each([
    ["ECONNREFUSED", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })],
    ["ECONNRESET", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })],
    ["ETIMEDOUT", Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" })],
    ["EPIPE", Object.assign(new Error("write EPIPE"), { code: "EPIPE" })],
    ["ENOTFOUND", Object.assign(new Error("getaddrinfo ENOTFOUND db"), { code: "ENOTFOUND" })],
    ["EAI_AGAIN", Object.assign(new Error("getaddrinfo EAI_AGAIN db"), { code: "EAI_AGAIN" })],
    ["EHOSTUNREACH", Object.assign(new Error("connect EHOSTUNREACH"), { code: "EHOSTUNREACH" })],
    ["08006 connection failure", dbError("08006")],
    ["08001 cannot establish", dbError("08001")],
    ["53100 disk full", dbError("53100", "could not extend file: No space left on device")],
    ["53300 too many connections", dbError("53300", "sorry, too many clients already")],
    ["57P01 admin shutdown", dbError("57P01", "terminating connection due to administrator command")],
    ["57P02 crash shutdown", dbError("57P02")],
    ["57P03 starting up", dbError("57P03", "the database system is starting up")],
    ["40001 serialization failure", dbError("40001")],
    ["40P01 deadlock", dbError("40P01", "deadlock detected")],
    ["55P03 lock not available", dbError("55P03", "canceling statement due to lock timeout")],
    ["25006 read-only transaction", dbError("25006", "cannot execute INSERT in a read-only transaction")],
    ["57014 statement timeout", dbError("57014", "canceling statement due to statement timeout")],
    ["pg: client-side query timeout", new Error("Query read timeout")],
    ["pg: Connection terminated unexpectedly", new Error("Connection terminated unexpectedly")],
    ["pg: Connection terminated due to connection timeout", new Error("Connection terminated due to connection timeout")],
    ["pg-pool: connect timeout", new Error("timeout exceeded when trying to connect")],
    ["pg: broken client", new Error("Client has encountered a connection error and is not queryable")],
    ["wrapped 3 deep", new Error("a", { cause: new Error("b", { cause: dbError("57P01") }) })],
    ["AggregateError of connect attempts", Object.assign(new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })], "connect failed"), {})],
  ])("%s is a fault", (_, err) => {
    expect(pgStorageFault(err)).toBe(true);
  });

  it.each([
    ["unique violation 23505", dbError("23505", "duplicate key value violates unique constraint")],
    ["syntax error 42601", dbError("42601", 'syntax error at or near "SELEC"')],
    ["undefined table 42P01", dbError("42P01", 'relation "nope" does not exist')],
    ["check violation 23514", dbError("23514")],
    ["a plain error", new Error("boom")],
    ["a SQLite fault", Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })],
    ["a 5-letter non-SQLSTATE code", Object.assign(new Error("x"), { code: "08abc" })],
    ["a message merely mentioning a connection", new Error("Connection pool ended")],
    ["null", null],
    ["a string", "ECONNREFUSED"],
    ["a fault 6 causes deep", [1, 2, 3, 4, 5].reduce<Error>((inner) => new Error("wrap", { cause: inner }), dbError("57P01"))],
  ])("%s is not a fault", (_, err) => {
    expect(pgStorageFault(err)).toBe(false);
  });
});

const avail = postgresAvailable();
const skip = skipPostgresSuite("pg-fault", avail);

describe.skipIf(skip)("createPgPool against a real server", () => {
  let cluster: PgCluster | undefined;
  beforeAll(async () => {
    assertPostgresAvailable(avail);
    cluster = await startPostgres();
  });
  afterAll(() => cluster?.stop());

  it("returns BIGINT and BIGINT[] as JS numbers, per pool (the global pg parsers are untouched)", async () => {
    const pool = createPgPool(cluster!.url);
    try {
      const { rows } = await pool.query(
        "SELECT 1700000000123::bigint AS ms, count(*) AS n, ARRAY[1, NULL, 3]::bigint[] AS arr, NULL::bigint AS none, 5::int AS i FROM generate_series(1, 3)",
      );
      expect(rows[0]).toEqual({ ms: 1700000000123, n: 3, arr: [1, null, 3], none: null, i: 5 });
      // Past 2^53 a number would be rounded: the query fails instead.
      await expect(pool.query("SELECT 9007199254740993::bigint AS big")).rejects.toThrow(/does not fit a JS number/);
      expect((await pool.query("SELECT 9007199254740991::bigint AS max")).rows[0].max).toBe(Number.MAX_SAFE_INTEGER);
    } finally {
      await pool.end();
    }
    const plain = new pg.Client({ connectionString: cluster!.url });
    await plain.connect();
    try {
      expect((await plain.query("SELECT 7::bigint AS v")).rows[0].v).toBe("7");
    } finally {
      await plain.end();
    }
  });

  it("a new connection has its session limits from its first query on, through pool.query and pool.connect", async () => {
    const pool = createPgPool(cluster!.url, { max: 2 });
    try {
      const limits = "SELECT current_setting('statement_timeout') AS st, current_setting('lock_timeout') AS lt, current_setting('idle_in_transaction_session_timeout') AS it";
      const want = { st: "15s", lt: "5s", it: "30s" };
      expect((await pool.query(limits)).rows).toEqual([want]);
      const reused = await pool.connect(); // the idle one: held, so the next checkout opens a connection
      const fresh = await pool.connect();
      try {
        expect((await fresh.query(limits)).rows).toEqual([want]);
      } finally {
        reused.release();
        fresh.release();
      }
      expect(pool.totalCount).toBe(2);
    } finally {
      await pool.end();
    }
  });

  it("an idle connection killed by the server goes to onError, and the pool carries on", async () => {
    let reported!: (err: Error) => void;
    const errorSeen = new Promise<Error>((resolve) => (reported = resolve));
    const pool = createPgPool(cluster!.url, { onError: (err) => reported(err) });
    try {
      const pid = (await pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      expect(pool.idleCount).toBe(1);
      await adminQuery(`SELECT pg_terminate_backend(${pid})`);
      const err = await errorSeen;
      expect(err).toMatchObject({ code: "57P01" });
      expect(pgStorageFault(err)).toBe(true);
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it("a checked-out connection killed between queries does not end the process; its next query is a fault", async () => {
    const pool = createPgPool(cluster!.url, { onError: () => {} });
    const client = await pool.connect();
    let released = false;
    try {
      // The pool stops listening while a client is out: only createPgPool's listener is left, and
      // without it the 'error' below would be an uncaught exception (vitest fails the run on one).
      expect(client.listenerCount("error")).toBe(1);
      // Awaited on pg's connection (internal, but the only event that is not the 'error' itself).
      const connection = (client as unknown as { connection: EventEmitter }).connection;
      const ended = once(connection, "end");
      const pid = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      await adminQuery(`SELECT pg_terminate_backend(${pid})`);
      await ended;
      const next = await client.query("SELECT 1").then(() => undefined, (e: unknown) => e);
      expect(pgStorageFault(next)).toBe(true);
      client.release(); // a broken client is dropped, not handed out again
      released = true;
      expect(pool.totalCount).toBe(0);
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      if (!released) client.release(true);
      await pool.end();
    }
  });

  it("a stopped server is a fault (ECONNREFUSED)", async () => {
    const own = await startPostgres();
    await own.stop();
    const pool = createPgPool(own.url);
    try {
      const err = await pool.query("SELECT 1").then(() => undefined, (e: unknown) => e);
      expect(err).toMatchObject({ code: "ECONNREFUSED" });
      expect(pgStorageFault(err)).toBe(true);
    } finally {
      await pool.end();
    }
  });

  async function adminQuery(sql: string): Promise<void> {
    const c = new pg.Client({ connectionString: cluster!.url });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  }
});
