import type { Database } from "better-sqlite3";
import type { TollgateTool } from "../tollgate-tool.js";
import { setupDemoTables } from "./demo-tables.js";
import { lookupOrderTool } from "./lookup-order.js";
import { refundOrderTool } from "./refund-order.js";
import { sendEmailTool } from "./send-email.js";

export { setupDemoTables } from "./demo-tables.js";

/** The order-support demo: one read-only tool and two irreversible ones, on the given database. */
export function createDemoTools(db: Database): TollgateTool[] {
  setupDemoTables(db);
  return [lookupOrderTool(db), refundOrderTool(db), sendEmailTool(db)];
}
