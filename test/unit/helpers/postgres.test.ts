import fs from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  assertPostgresAvailable,
  type PgCluster,
  postgresAvailable,
  skipPostgresSuite,
  startPostgres,
} from "../../helpers/postgres.js";

const avail = postgresAvailable();
const skip = skipPostgresSuite("postgres-helper", avail);

describe("skipPostgresSuite", () => {
  it("skips without PostgreSQL, except under CI=true where the suite must run and fail", () => {
    const missing = { ok: false, why: "not installed" };
    const ci = process.env.CI;
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      process.env.CI = "false";
      expect(skipPostgresSuite("t", missing)).toBe(true);
      expect(log.mock.calls).toEqual([["[t] skipped: no PostgreSQL: not installed"]]);
      expect(skipPostgresSuite("t", { ok: true })).toBe(false);
      process.env.CI = "true";
      expect(skipPostgresSuite("t", missing)).toBe(false);
      expect(log).toHaveBeenCalledTimes(1);
    } finally {
      log.mockRestore();
      if (ci === undefined) delete process.env.CI;
      else process.env.CI = ci;
    }
    expect(() => assertPostgresAvailable(missing)).toThrow(/not installed/);
  });
});

async function query(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

const tablesIn = async (url: string) =>
  (await query(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).rows.map((r) => r.tablename);

describe.skipIf(skip)("startPostgres", () => {
  let cluster: PgCluster | undefined;
  beforeAll(async () => {
    assertPostgresAvailable(avail);
    cluster = await startPostgres();
  });
  afterAll(() => cluster?.stop());

  it("serves the postgres database as superuser on its port", async () => {
    expect(cluster!.url).toBe(`postgres://postgres@127.0.0.1:${cluster!.port}/postgres`);
    const { rows } = await query(cluster!.url, "SELECT current_user AS u, current_setting('port') AS p, current_setting('fsync') AS f");
    expect(rows[0]).toEqual({ u: "postgres", p: String(cluster!.port), f: "off" });
  });

  it("createDatabase gives a fresh empty database per call", async () => {
    const a = await cluster!.createDatabase();
    const b = await cluster!.createDatabase();
    expect(a).not.toBe(b);
    expect(await tablesIn(a)).toEqual([]);
    await query(a, "CREATE TABLE t (id BIGINT PRIMARY KEY); INSERT INTO t VALUES (1)");
    expect((await query(a, "SELECT id FROM t")).rows).toEqual([{ id: "1" }]);
    expect(await tablesIn(a)).toEqual(["t"]);
    expect(await tablesIn(b)).toEqual([]); // nothing leaks between databases
    expect(await cluster!.createDatabase("named_db")).toMatch(/\/named_db$/);
    await expect(cluster!.createDatabase('x"; DROP DATABASE postgres; --')).rejects.toThrow(/not a plain database name/);
  });

  it("stop() shuts the server: the port refuses connections and the dir is gone", async () => {
    const own = await startPostgres();
    expect(own.port).not.toBe(cluster!.port);
    expect((await query(own.url, "SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await own.stop();
    await expect(query(own.url, "SELECT 1")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(fs.existsSync(own.dir)).toBe(false);
    await own.stop(); // idempotent
    // the other cluster is untouched
    expect((await query(cluster!.url, "SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });
});
