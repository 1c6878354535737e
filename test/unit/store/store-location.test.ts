import { describe, expect, it } from "vitest";
import { databaseWithoutSecrets, storeLocation } from "../../../src/store/index.js";

describe("storeLocation", () => {
  it("is the data dir without DATABASE_URL, and the database without its secrets with it", () => {
    expect(storeLocation({ dataDir: "./data" })).toEqual({ kind: "sqlite", dataDir: "./data" });
    expect(storeLocation({ dataDir: "./data", databaseUrl: "postgres://app:pw-0001@db.internal:5432/tollgate" })).toEqual({
      kind: "postgres",
      database: "postgres://app@db.internal:5432/tollgate",
    });
  });

  it.each([
    ["a password", "postgresql://app:s3cr%40t@db:6543/tg", "postgresql://app@db:6543/tg"],
    ["a password in the query", "postgres://app@db/tg?sslmode=require&password=s3cr%40t", "postgres://app@db/tg"],
    ["no user", "postgres://db.internal/tg", "postgres://db.internal/tg"],
    ["a Unix socket in the query", "postgres:///tg?host=/var/run/postgresql", "postgres:///tg"],
    ["a URL that does not parse", "postgres://app:s3cr@t@db:port/tg", "(a database URL that does not parse)"],
  ])("drops the secrets of a URL with %s", (_, url, shown) => {
    expect(databaseWithoutSecrets(url)).toBe(shown);
  });
});
