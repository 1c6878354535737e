import type { Database } from "better-sqlite3";
import { throwIfAborted } from "../tool-context.js";

export interface OrderRow {
  order_id: string;
  status: string;
  total_cents: number;
  customer_email: string;
}

/** An order as `lookup_order` reports it: with what has been refunded so far. */
export interface OrderView extends OrderRow {
  refunded_cents: number;
}

/** A refund to record; `call_id` is the call's id, kept beside the effect for auditing. */
export interface RefundInsert {
  order_id: string;
  amount_cents: number;
  reason: string;
  call_id: string | null;
}

/** An email to put in the outbox. */
export interface EmailInsert {
  to: string;
  subject: string;
  body: string;
  call_id: string | null;
}

/**
 * The demo tools' tables, in whichever database the store uses. Writes check `signal` inside their
 * transaction, right before committing: a call cancelled before then leaves no row.
 */
export interface DemoTables {
  order(orderId: string): Promise<OrderView | undefined>;
  /** Records the refund; its id. */
  addRefund(r: RefundInsert, signal?: AbortSignal): Promise<number>;
  /** Puts the email in the outbox; its id. */
  addEmail(r: EmailInsert, signal?: AbortSignal): Promise<number>;
}

/** The orders every demo database starts with. */
export const DEMO_ORDERS: readonly OrderRow[] = [
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
  db.transaction(() => DEMO_ORDERS.forEach((o) => insert.run(o)))();
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

/**
 * How synchronous statements reach a connection others share: the store's SQLite connection has
 * one holder at a time (a transaction spans awaits), and a demo write run in the middle of one
 * would join it and roll back with it. The default runs them at once (a connection of its own).
 */
export type SqliteGate = <T>(work: () => T) => Promise<T>;

const runNow: SqliteGate = async (work) => work();

/** The demo tables in SQLite (`setupDemoTables` made them), prepared at first use. */
export function sqliteDemoTables(source: DbSource, gate: SqliteGate = runNow): DemoTables {
  const q = prepared(source, (d) => ({
    order: d.prepare<[string], OrderRow>("SELECT * FROM orders WHERE order_id = ?"),
    refunded: d.prepare<[string], { total: number }>("SELECT COALESCE(SUM(amount_cents), 0) AS total FROM refunds WHERE order_id = ?"),
    refund: d.prepare("INSERT INTO refunds (order_id, amount_cents, reason, call_id, created_at) VALUES (?, ?, ?, ?, ?)"),
    email: d.prepare('INSERT INTO outbox ("to", subject, body, call_id, created_at) VALUES (?, ?, ?, ?, ?)'),
    transaction: <T>(fn: () => T) => d.transaction(fn),
  }));
  return {
    order: (orderId) =>
      gate(() => {
        const { order, refunded } = q();
        const row = order.get(orderId);
        return row && { ...row, refunded_cents: refunded.get(orderId)!.total };
      }),
    addRefund: (r, signal) =>
      gate(() => {
        const { refund, transaction } = q();
        // The abort check and the insert in one synchronous transaction: nothing can land between.
        return Number(
          transaction(() => {
            throwIfAborted(signal);
            return refund.run(r.order_id, r.amount_cents, r.reason, r.call_id, new Date().toISOString()).lastInsertRowid;
          })(),
        );
      }),
    addEmail: (r, signal) =>
      gate(() => {
        const { email, transaction } = q();
        return Number(
          transaction(() => {
            throwIfAborted(signal);
            return email.run(r.to, r.subject, r.body, r.call_id, new Date().toISOString()).lastInsertRowid;
          })(),
        );
      }),
  };
}

/** The tables behind a tool's argument: demo tables as they are, a SQLite database wrapped. */
export function demoTablesOf(source: DemoTables | DbSource): DemoTables {
  return typeof source !== "function" && "addRefund" in source ? source : sqliteDemoTables(source);
}
