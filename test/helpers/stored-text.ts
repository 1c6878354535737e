/**
 * Everything a database holds, as text: every row of every table, BLOBs and `bytea` decoded as
 * UTF-8, so a test can look for a value that must never be stored (a secret, an unmasked argument)
 * wherever it could hide, LangGraph's checkpoints and writes included. Works on both backends
 * through `openDb`'s view (PostgreSQL rows arrive as JSON, `bytea` as `\x…` hex).
 */
import { pgTestClusterUrl } from "./pg-test-db.js";
import type { TestDb } from "./sqlite.js";

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Every table's rows as one text per table, keyed by the table's (schema-qualified on PostgreSQL) name. */
export function storedTextByTable(db: TestDb): Map<string, string> {
  const pg = !!pgTestClusterUrl();
  const tables = pg
    ? (db
        .prepare("SELECT table_schema AS schema_name, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'")
        .all() as Array<{ schema_name: string; table_name: string }>)
    : (db.prepare("SELECT '' AS schema_name, name AS table_name FROM sqlite_master WHERE type = 'table'").all() as Array<{ schema_name: string; table_name: string }>);
  const out = new Map<string, string>();
  for (const { schema_name: s, table_name: t } of tables) {
    if (!IDENT.test(t) || (s && !IDENT.test(s))) throw new Error(`storedText: unexpected table name ${s}.${t}`);
    const name = s ? `"${s}"."${t}"` : `"${t}"`;
    const rows = db.prepare(`SELECT * FROM ${name}`).all() as Array<Record<string, unknown>>;
    out.set(s ? `${s}.${t}` : t, rows.map((r) => Object.values(r).map(asText).join("\t")).join("\n"));
  }
  return out;
}

function asText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString("utf8");
  if (typeof v === "string") return /^\\x(?:[0-9a-f]{2})*$/.test(v) ? Buffer.from(v.slice(2), "hex").toString("utf8") : v;
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}
