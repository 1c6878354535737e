import type { Database } from "better-sqlite3";
import type { TollgateTool } from "../tollgate-tool.js";
import { type DemoTables, setupDemoTables, sqliteDemoTables } from "./demo-tables.js";
import { lookupOrderTool } from "./lookup-order.js";
import { refundOrderTool } from "./refund-order.js";
import { sendEmailTool } from "./send-email.js";

export { setupDemoTables, sqliteDemoTables, type DemoTables, type SqliteGate } from "./demo-tables.js";

/** The order-support demo: one read-only tool and two irreversible ones, on the given SQLite database. */
export function createDemoTools(db: Database): TollgateTool[] {
  setupDemoTables(db);
  return createDemoToolsOn(sqliteDemoTables(db));
}

/** The order-support demo on tables already set up (`sqliteDemoTables`, `postgresDemoTables`). */
export function createDemoToolsOn(tables: DemoTables): TollgateTool[] {
  return [lookupOrderTool(tables), refundOrderTool(tables), sendEmailTool(tables)];
}
