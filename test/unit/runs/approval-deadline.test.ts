import { expect, it } from "vitest";
import type { Tollgate } from "../../../src/index.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { inProcessTollgates } from "../../helpers/in-process-tollgate.js";

// The approval window on an injected clock, in-process: the deadline the wire shows, the last
// millisecond a decision is still taken, the first one it is refused, and the closer's sweep, all
// without sleeping. (test/e2e/durability.test.ts keeps real expiry on the system clock in a child
// process, timer wiring included.)

const TTL_MS = 60_000;
const openTollgate = inProcessTollgates();

function open(clock: FakeClock): Promise<Tollgate> {
  // The sweep timer never fires on its own here: only `expiry.sweep()` closes.
  return openTollgate({ env: { APPROVAL_TTL_SECONDS: String(TTL_MS / 1000), EXPIRY_SWEEP_MS: "3600000", DEMO_TOKEN_DELAY_MS: "0" }, clock });
}

const post = (t: Tollgate, url: string, body: unknown) =>
  t.app.request(url, { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify(body) });
const get = async (t: Tollgate, url: string) => (await t.app.request(url)).json();

interface Pending {
  interrupt_id: string;
  expires_at: string;
  calls: { call_id: string }[];
}

/** Asks for a refund and returns the interrupt it opened, as `GET /threads/:id` shows it. */
async function interrupted(t: Tollgate, thread: string): Promise<Pending> {
  const res = await post(t, `/threads/${thread}/runs`, { message: "refund order A-1002 5 dollars" });
  expect(await res.text()).toContain("event: interrupt");
  return ((await get(t, `/threads/${thread}`)) as { pending: Pending }).pending;
}

const approve = (t: Tollgate, thread: string, p: Pending) =>
  post(t, `/threads/${thread}/resume`, { interrupt_id: p.interrupt_id, decisions: p.calls.map((c) => ({ call_id: c.call_id, approved: true })) });

it("expires_at is the injected clock plus the TTL; one millisecond before it an approval is taken", async () => {
  const clock = new FakeClock(Date.UTC(2030, 0, 1));
  const t = await open(clock);
  const p = await interrupted(t, "in-time");
  expect(p.expires_at).toBe(new Date(Date.UTC(2030, 0, 1) + TTL_MS).toISOString());
  expect(p).toMatchObject({ thread_id: "in-time", resume_url: "/threads/in-time/resume" });

  clock.advance(TTL_MS - 1);
  expect(await t.expiry.sweep()).toBe(0);
  expect(((await get(t, "/approvals")) as { items: unknown[] }).items).toHaveLength(1);
  const res = await approve(t, "in-time", p);
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('"outcome":"completed"');
  const audit = (await get(t, "/threads/in-time/audit")) as { entries: { decision: string; at: string }[] };
  expect(audit.entries).toEqual([expect.objectContaining({ decision: "approved", at: new Date(Date.UTC(2030, 0, 1) + TTL_MS - 1).toISOString() })]);
});

it("at the deadline the approval is refused with 410 though no sweep ran; the sweep then closes it as expired", async () => {
  const clock = new FakeClock(Date.UTC(2030, 0, 1));
  const t = await open(clock);
  const p = await interrupted(t, "late");

  clock.advance(TTL_MS);
  // Gone from the inbox at once: nothing is offered that cannot be decided.
  expect(((await get(t, "/approvals")) as { items: unknown[] }).items).toEqual([]);
  const res = await approve(t, "late", p);
  expect(res.status).toBe(410);
  expect(await res.json()).toEqual({ error: { code: "approval_expired", message: `Approval window closed at ${p.expires_at}` } });

  expect(await t.expiry.sweep()).toBe(1);
  expect(await get(t, "/threads/late")).toMatchObject({ status: "idle", last_outcome: "expired", pending: null });
  const audit = (await get(t, "/threads/late/audit")) as { entries: { decision: string; by: string | null; at: string }[] };
  expect(audit.entries).toEqual([expect.objectContaining({ decision: "expired", by: null, at: p.expires_at })]);
});
