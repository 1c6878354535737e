import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openDb } from "../../helpers/sqlite.js";

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).reverse().forEach((f) => f()));

function writerDb() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-sqlite-"));
  const w = new Database(path.join(dir, "tollgate.db"));
  w.pragma("journal_mode = WAL"); // as the server will run it
  w.exec("CREATE TABLE refunds (call_id TEXT, amount_cents INTEGER)");
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }), () => w.close());
  return { dir, w };
}

describe("openDb", () => {
  it("reads rows a live writer committed, in insertion order", () => {
    const { dir, w } = writerDb();
    const db = openDb(dir);
    cleanups.push(() => db.close());
    expect(db.countRows("refunds")).toBe(0);
    w.prepare("INSERT INTO refunds VALUES (?, ?)").run("call_2", 500);
    w.prepare("INSERT INTO refunds VALUES (?, ?)").run("call_1", 100);
    expect(db.countRows("refunds")).toBe(2);
    expect(db.rows("refunds")).toEqual([{ call_id: "call_2", amount_cents: 500 }, { call_id: "call_1", amount_cents: 100 }]);
    expect(db.rows<{ call_id: string }>("refunds", "amount_cents > ?", 200).map((r) => r.call_id)).toEqual(["call_2"]);
  });

  it("is read-only and refuses odd table names", () => {
    const { dir } = writerDb();
    const db = openDb(dir);
    cleanups.push(() => db.close());
    expect(() => db.exec("DELETE FROM refunds")).toThrow(/readonly/);
    expect(() => db.countRows("refunds; DROP TABLE refunds")).toThrow(/not a table name/);
  });

  it("fails clearly when the database does not exist", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-sqlite-"));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    expect(() => openDb(dir)).toThrow();
  });
});
