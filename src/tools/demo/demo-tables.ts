import type { Database } from "better-sqlite3";

export interface OrderRow {
  order_id: string;
  status: string;
  total_cents: number;
  customer_email: string;
}

const SEED: OrderRow[] = [
  { order_id: "A-1001", status: "shipped", total_cents: 4999, customer_email: "ada@example.com" },
  { order_id: "A-1002", status: "delivered", total_cents: 12000, customer_email: "grace@example.com" },
  { order_id: "A-1003", status: "processing", total_cents: 2550, customer_email: "alan@example.com" },
  { order_id: "A-1004", status: "delivered", total_cents: 8900, customer_email: "edsger@example.com" },
  { order_id: "A-1005", status: "cancelled", total_cents: 1500, customer_email: "barbara@example.com" },
];

/**
 * The demo tools' tables. No UNIQUE on call_id on purpose: exactly-once must come from the run
 * engine's ledger, and a test that counts rows would otherwise be fooled by the constraint.
 */
export function setupDemoTables(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS orders (
      order_id TEXT PRIMARY KEY, status TEXT NOT NULL, total_cents INTEGER NOT NULL,
      customer_email TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS refunds (
      id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL, amount_cents INTEGER NOT NULL,
      reason TEXT NOT NULL, call_id TEXT, created_at TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS outbox (
      id INTEGER PRIMARY KEY AUTOINCREMENT, "to" TEXT NOT NULL, subject TEXT NOT NULL,
      body TEXT NOT NULL, call_id TEXT, created_at TEXT NOT NULL);
  `);
  const insert = db.prepare(
    "INSERT OR IGNORE INTO orders (order_id, status, total_cents, customer_email) VALUES (@order_id, @status, @total_cents, @customer_email)",
  );
  db.transaction(() => SEED.forEach((o) => insert.run(o)))();
}

/** The call id part of `thread_id:call_id`, stored beside each effect for auditing. */
export function callIdOf(idempotencyKey: string | undefined): string | null {
  if (!idempotencyKey) return null;
  const at = idempotencyKey.lastIndexOf(":");
  return at >= 0 ? idempotencyKey.slice(at + 1) : idempotencyKey;
}

/** A database, or a way to get one at first use (LangGraph Studio opens it lazily). */
export type DbSource = Database | (() => Database);

/** Statements prepared once, on first use, so building a tool never touches the database. */
export function prepared<T>(source: DbSource, build: (db: Database) => T): () => T {
  let made: T | undefined;
  return () => (made ??= build(typeof source === "function" ? source() : source));
}
