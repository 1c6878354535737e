import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/logger.js";
import { createTollgate, type Tollgate } from "../../../src/index.js";
import { FakeClock } from "../../helpers/fake-clock.js";

// Random interleavings of resume, cancel, expiry and restart on one thread, in-process on the
// demo model (the child-process tests cover kill -9). Whatever happens, no approved call runs
// twice and nothing runs without an approval that the gate accepted before its deadline. Time is a
// fake clock shared by every restart of the world: a deadline passes when an action moves it, not
// by sleeping, so the gate, the closer and the stamps in the database all see the same moment.

const TTL_S = 60;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

type Action = "approve" | "reject" | "cancel" | "expire" | "late" | "restart" | "message" | "approve_x3" | "approve_then_restart";
const action = fc.constantFrom<Action>("approve", "reject", "cancel", "expire", "late", "restart", "message", "approve_x3", "approve_then_restart");

class World {
  tg!: Tollgate;
  readonly clock = new FakeClock();
  constructor(readonly dataDir: string) {}
  async open() {
    const config = loadConfig({ DATA_DIR: this.dataDir, APPROVAL_TTL_SECONDS: String(TTL_S), EXPIRY_SWEEP_MS: "3600000", DEMO_TOKEN_DELAY_MS: "0" });
    this.tg = await createTollgate({ config, log: silentLogger, clock: this.clock });
  }
  async request(method: string, url: string, body?: unknown) {
    const res = await this.tg.app.request(url, {
      method,
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  }
  async pending(thread: string) {
    const r = await this.tg.app.request(`/threads/${thread}`);
    return r.status === 200 ? ((await r.json()) as { pending: { interrupt_id: string; calls: { call_id: string }[] } | null }).pending : null;
  }
  resume(thread: string, p: { interrupt_id: string; calls: { call_id: string }[] }, approved: boolean) {
    return this.request("POST", `/threads/${thread}/resume`, {
      interrupt_id: p.interrupt_id,
      decisions: p.calls.map((c) => ({ call_id: c.call_id, approved })),
    });
  }
}

async function play(actions: Action[]): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-prop-"));
  dirs.push(dataDir);
  const w = new World(dataDir);
  await w.open();
  const thread = "t";
  await w.request("POST", `/threads/${thread}/runs`, { message: "refund order A-1002 5 dollars" });
  for (const a of actions) {
    const p = await w.pending(thread);
    switch (a) {
      case "approve":
      case "reject":
        if (p) await w.resume(thread, p, a === "approve");
        break;
      case "approve_x3":
        if (p) await Promise.all([w.resume(thread, p, true), w.resume(thread, p, true), w.resume(thread, p, true)]);
        break;
      case "approve_then_restart":
        if (p) {
          const inflight = w.resume(thread, p, true);
          await w.tg.close();
          await inflight;
          await w.open();
        }
        break;
      case "cancel":
        await w.request("POST", `/threads/${thread}/cancel`);
        break;
      case "expire": // the deadline passes and the closer runs
        w.clock.advance(TTL_S * 1000);
        await w.tg.expiry.sweep();
        break;
      case "late": // the deadline passes before the closer gets to it
        w.clock.advance(TTL_S * 1000);
        break;
      case "restart":
        await w.tg.close();
        await w.open();
        break;
      case "message":
        await w.request("POST", `/threads/${thread}/runs`, { message: "refund order A-1002 5 dollars" });
        break;
    }
  }
  await w.tg.close();
  check(dataDir);
}

function check(dataDir: string): void {
  const db = new Database(path.join(dataDir, "tollgate.db"), { readonly: true });
  try {
    const refunds = db.prepare("SELECT call_id FROM refunds").all() as { call_id: string }[];
    const perCall = new Map<string, number>();
    for (const r of refunds) perCall.set(r.call_id, (perCall.get(r.call_id) ?? 0) + 1);
    for (const [callId, n] of perCall) expect(n, `refunds for ${callId}`).toBe(1);
    const approvals = db
      .prepare("SELECT decisions, decided_at, expires_at FROM interrupts WHERE status = 'resumed'")
      .all() as { decisions: string; decided_at: number; expires_at: number }[];
    const approvedInTime = new Set<string>();
    for (const a of approvals) {
      if (a.decided_at >= a.expires_at) continue;
      for (const d of JSON.parse(a.decisions) as { call_id: string; approved: boolean }[]) if (d.approved) approvedInTime.add(d.call_id);
    }
    for (const callId of perCall.keys()) expect(approvedInTime.has(callId), `refund ${callId} without a timely approval`).toBe(true);
  } finally {
    db.close();
  }
}

it("no interleaving runs an approved call twice or an unapproved one at all", async () => {
  await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 7 }), play), { numRuns: 40 });
}, 120_000);
