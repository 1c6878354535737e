import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore as Store } from "../../../src/store/index.js";

const opened: Store[] = [];
const dirs: string[] = [];
async function open(dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-audit-"))): Promise<Store> {
  dirs.push(dir);
  const s = await openSqliteStore(dir);
  opened.push(s);
  return s;
}
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const row = (store: Store, decision: "approved" | "rejected") => ({
  thread_id: "t1", interrupt_id: "i1", call_id: "c1", tool: "refund_order",
  args_hash: store.audit.hash({ amount_cents: 5 }), decision, by: "ops", reason: null, at: 1_700_000_000_000,
});

describe("the audit store", async () => {
  it("refuses to change or delete a row, in the database itself", async () => {
    const s = await open();
    await s.audit.append([row(s, "approved")]);
    expect(() => s.db.prepare("UPDATE audit SET decision = 'rejected'").run()).toThrow(/immutable/);
    expect(() => s.db.prepare("DELETE FROM audit").run()).toThrow(/immutable/);
    expect((await s.audit.list("t1"))).toMatchObject([{ decision: "approved", by: "ops", at: 1_700_000_000_000 }]);
  });

  it("hashes with a key of its own per database, kept across restarts, insensitive to key order", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-audit-"));
    const first = await open(dir);
    const h = first.audit.hash({ a: 1, b: "x" });
    expect(first.audit.hash({ b: "x", a: 1 })).toBe(h);
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    expect((await open(dir)).audit.hash({ a: 1, b: "x" })).toBe(h);
    expect((await open()).audit.hash({ a: 1, b: "x" })).not.toBe(h);
  });

  it("joins an approved call's execution from the ledger only for the arguments that were approved", async () => {
    const s = await open();
    await s.audit.append([{ ...row(s, "approved"), run_args_hash: "H-approved" }]);
    expect((await s.audit.list("t1"))[0]!.executed).toBeUndefined();
    // The model reused the call id for other arguments in a later turn: not this call's execution.
    await s.ledger.claim("t1:c1", { threadId: "t1", callId: "c1", name: "refund_order", argsHash: "H-other" });
    expect((await s.audit.list("t1"))[0]!.executed).toBeUndefined();
  });

  it("reports a claimed call with no outcome as unknown, and a settled one with its status", async () => {
    const s = await open();
    await s.audit.append([{ ...row(s, "approved"), run_args_hash: "H" }]);
    await s.ledger.claim("t1:c1", { threadId: "t1", callId: "c1", name: "refund_order", argsHash: "H" });
    expect((await s.audit.list("t1"))[0]!.executed).toMatchObject({ status: "unknown" });
    await s.ledger.settle("t1:c1", { status: "error", error: "boom" });
    expect((await s.audit.list("t1"))[0]!.executed).toMatchObject({ status: "error" });
  });
});
