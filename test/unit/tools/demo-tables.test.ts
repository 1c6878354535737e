/**
 * The demo tools' tables, SQLite and PostgreSQL, held to one suite: the tools built on either
 * answer the same, an aborted write leaves no row, and nothing but the run engine makes a call
 * exactly-once (no UNIQUE on call_id).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPgPool } from "../../../src/store/postgres/pg-pool.js";
import { withTransaction } from "../../../src/store/postgres/queryable.js";
import { ABORT_SIGNAL_KEY } from "../../../src/tools/tool-context.js";
import { createDemoTools, createDemoToolsOn, type DemoTables } from "../../../src/tools/demo/index.js";
import { postgresDemoTables } from "../../../src/tools/demo/pg-demo-tables.js";
import { createTestTools, createTestToolsOn } from "../../../src/tools/testing/test-tools.js";
import { sqliteDemoTables, setupDemoTables } from "../../../src/tools/demo/demo-tables.js";
import type { TollgateTool } from "../../../src/tools/tollgate-tool.js";
import { assertPostgresAvailable, type PgCluster, skipPostgresSuite, startPostgres } from "../../helpers/postgres.js";

interface Backend {
  name: string;
  skip: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** Fresh demo tables, the tools on them, and the count of a table's rows. */
  fresh(): Promise<{ tables: DemoTables; tools: TollgateTool[]; testTools: TollgateTool[]; count(table: "refunds" | "outbox"): Promise<number> }>;
}

const cleanups: Array<() => Promise<void> | void> = [];
async function cleanUp() {
  for (const c of cleanups.splice(0).reverse()) await c();
}

const sqlite: Backend = {
  name: "sqlite",
  skip: false,
  async setup() {},
  async teardown() {},
  async fresh() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-demo-"));
    const db = new Database(path.join(dir, "demo.db"));
    cleanups.push(() => (db.close(), fs.rmSync(dir, { recursive: true, force: true })));
    // As the server builds them: createDemoTools(db) sets the tables up.
    const tools = createDemoTools(db);
    return {
      tables: sqliteDemoTables(db),
      tools,
      testTools: createTestTools(db),
      count: async (table) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
    };
  },
};

let cluster: PgCluster | undefined;
const postgres: Backend = {
  name: "postgres",
  skip: skipPostgresSuite("demo-tables (postgres)"),
  async setup() {
    assertPostgresAvailable();
    cluster = await startPostgres();
  },
  async teardown() {
    await cluster?.stop();
  },
  async fresh() {
    const pool = createPgPool(await cluster!.createDatabase());
    cleanups.push(() => pool.end());
    // Replicas starting together: the setup runs under a lock, and seeds once.
    const [tables] = await Promise.all([0, 1, 2].map(() => postgresDemoTables(pool, (fn) => withTransaction(pool, fn))));
    return {
      tables,
      tools: createDemoToolsOn(tables),
      testTools: createTestToolsOn(tables),
      count: async (table) => Number((await pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n),
    };
  },
};

const config = (callId: string, signal?: AbortSignal) => ({
  configurable: { idempotency_key: `thread-1:${callId}`, ...(signal ? { [ABORT_SIGNAL_KEY]: signal } : {}) },
});

/** What a tool answers, or the message it fails with. */
async function invoke(tools: TollgateTool[], name: string, args: Record<string, unknown>, cfg = config("c0")): Promise<string> {
  const t = tools.find((x) => x.name === name)!;
  try {
    return String(await t.inner.invoke(args, cfg));
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

/** The same conversation with the tools, whichever database is under them: both must answer alike. */
async function script(tools: TollgateTool[]): Promise<string[]> {
  return [
    await invoke(tools, "lookup_order", { order_id: "A-1002" }),
    await invoke(tools, "refund_order", { order_id: "A-1002", amount_cents: 700, reason: "late" }, config("c1")),
    await invoke(tools, "refund_order", { order_id: "A-1002", amount_cents: 300, reason: "late" }, config("c1")),
    await invoke(tools, "lookup_order", { order_id: "A-1002" }),
    await invoke(tools, "lookup_order", { order_id: "Z-1" }),
    await invoke(tools, "refund_order", { order_id: "Z-1", amount_cents: 1, reason: "x" }),
    await invoke(tools, "send_email", { to: "grace@example.com", subject: "Refund", body: "Done" }, config("c2")),
  ];
}

const answers: Record<string, string[]> = {};

describe.each([sqlite, postgres])("the $name demo tables", (backend) => {
  describe.skipIf(backend.skip)("conform", () => {
    beforeAll(() => backend.setup(), 60_000);
    afterAll(async () => {
      await cleanUp(); // before the cluster goes: a pool whose server vanished complains
      await backend.teardown();
    });

    it("serve the seeded orders, with what has been refunded", async () => {
      const { tables } = await backend.fresh();
      expect(await tables.order("A-1001")).toEqual({
        order_id: "A-1001",
        status: "shipped",
        total_cents: 4999,
        customer_email: "ada@example.com",
        refunded_cents: 0,
      });
      expect(await tables.order("A-9999")).toBeUndefined();
      const first = await tables.addRefund({ order_id: "A-1001", amount_cents: 100, reason: "r", call_id: "c1" });
      const second = await tables.addRefund({ order_id: "A-1001", amount_cents: 250, reason: "r", call_id: null });
      expect(second).toBeGreaterThan(first);
      expect((await tables.order("A-1001"))!.refunded_cents).toBe(350);
    });

    it("keep no UNIQUE on call_id: exactly-once is the run engine's job, not the table's", async () => {
      const { tables, count } = await backend.fresh();
      await tables.addRefund({ order_id: "A-1003", amount_cents: 1, reason: "r", call_id: "same" });
      await tables.addRefund({ order_id: "A-1003", amount_cents: 1, reason: "r", call_id: "same" });
      await tables.addEmail({ to: "a@example.com", subject: "s", body: "b", call_id: "same" });
      await tables.addEmail({ to: "a@example.com", subject: "s", body: "b", call_id: "same" });
      expect([await count("refunds"), await count("outbox")]).toEqual([2, 2]);
    });

    it("write nothing when the call was aborted before its commit", async () => {
      const { tables, count, testTools } = await backend.fresh();
      const aborted = AbortSignal.abort(new Error("cancelled by user"));
      await expect(tables.addRefund({ order_id: "A-1001", amount_cents: 1, reason: "r", call_id: null }, aborted)).rejects.toThrow(
        "cancelled by user",
      );
      await expect(tables.addEmail({ to: "a@example.com", subject: "s", body: "b", call_id: null }, aborted)).rejects.toThrow(
        "cancelled by user",
      );
      expect(await invoke(testTools, "slow_refund", { order_id: "A-1001", amount_cents: 5, delay_ms: 0 }, config("c9", aborted))).toMatch(
        /^error: /,
      );
      expect([await count("refunds"), await count("outbox")]).toEqual([0, 0]);
      expect(await invoke(testTools, "slow_refund", { order_id: "A-1001", amount_cents: 5, delay_ms: 1 }, config("c9"))).toBe(
        '{"order_id":"A-1001","amount_cents":5}',
      );
      expect(await count("refunds")).toBe(1);
    });

    it("back tools that answer byte for byte as the SQLite ones do", async () => {
      const { tools } = await backend.fresh();
      const policy = (t: (typeof tools)[number], args: object) => (typeof t.policy === "function" ? t.policy(args as never) : t.policy);
      expect(tools.map((t) => [t.name, t.kind, policy(t, { amount_cents: 100 }), policy(t, { amount_cents: 60_000 }), t.editable, t.sensitive, t.sensitiveOutput])).toEqual([
        ["lookup_order", "read", "owner", "owner", false, [], ["customer_email"]],
        ["refund_order", "irreversible", "approver", { role: "finance", approvers: 2 }, true, [], []],
        ["send_email", "irreversible", "owner", "owner", true, ["to", "body"], ["to"]],
      ]);
      const got = await script(tools);
      expect(got[0]).toBe(
        '{"order_id":"A-1002","status":"delivered","total_cents":12000,"refunded_cents":0,"customer_email":"grace@example.com"}',
      );
      expect(got[1]).toBe('{"refund_id":1,"order_id":"A-1002","amount_cents":700}');
      expect(got[3]).toContain('"refunded_cents":1000');
      expect(got[4]).toBe("error: Order Z-1 not found");
      expect(got[6]).toBe('{"message_id":1,"to":"grace@example.com","subject":"Refund"}');
      answers[backend.name] = got;
      if (answers.sqlite && answers.postgres) expect(answers.postgres).toEqual(answers.sqlite);
    });
  });
});
