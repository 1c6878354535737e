import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { openSqliteStore } from "../../../src/store/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

it("a database made before ownership opens with its threads owned by anonymous, run by the built-in agent, and its open interrupts needing an approver", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-migrate-"));
  dirs.push(dir);
  // The threads and interrupts tables as the previous version made them.
  const old = new Database(path.join(dir, "tollgate.db"));
  old.exec(`
    CREATE TABLE threads (thread_id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'idle', last_outcome TEXT,
      latest_run_id TEXT, holder_id TEXT, open_interrupt_id TEXT, metadata TEXT NOT NULL DEFAULT '{}',
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    CREATE TABLE interrupts (interrupt_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, run_id TEXT NOT NULL, calls TEXT NOT NULL,
      status TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, decided_at INTEGER, decisions TEXT);
    INSERT INTO threads (thread_id, status, open_interrupt_id, created_at, updated_at) VALUES ('old', 'waiting_human', 'i1', 1, 2);
    INSERT INTO interrupts VALUES ('i1', 'old', 'r1', '[{"call_id":"c1","name":"refund_order","args":{"amount_cents":5},"args_hash":"h"}]',
      'waiting_human', 1, 9999999999999, NULL, NULL);
  `);
  old.close();

  const store = await openSqliteStore(dir);
  try {
    expect(await store.threads.get("old")).toMatchObject({ owner: "anonymous", title: null, status: "waiting_human", graph_id: "agent" });
    const [call] = (await store.interrupts.get("i1"))!.calls;
    expect(call).toMatchObject({ policy: "approver", editable: false, args_schema: {} });
    expect(call!.audit_hash).toMatch(/^[0-9a-f]{64}$/);
    expect((await store.threads.list(null, 10)).map((t) => t.thread_id)).toEqual(["old"]);
  } finally {
    await store.close();
  }
});
