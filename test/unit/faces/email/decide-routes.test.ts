/**
 * `/decide/<token>` through `app.request`: GET shows and changes nothing; a POST from PUBLIC_URL's
 * origin decides once; a dead link is 410 without arguments; an unknown one 404; strict headers;
 * no token in any log line.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { DECIDE_CSP } from "../../../../src/faces/email/index.js";
import { type DecideHarness, decideHarness } from "./decide-app-fixture.js";
import { refundCall } from "./notice-fixture.js";

const PUBLIC_URL = "https://tollgate.example.com";
const ORIGIN = PUBLIC_URL;
let h: DecideHarness;
let token: string;

const get = (t = token) => h.app.request(`${PUBLIC_URL}/decide/${t}`);
const post = (body: string, o: { origin?: string | null; t?: string; type?: string; site?: string } = {}) => {
  const headers: Record<string, string> = { "content-type": o.type ?? "application/x-www-form-urlencoded" };
  if (o.origin !== null) headers.origin = o.origin ?? ORIGIN;
  if (o.site) headers["sec-fetch-site"] = o.site;
  return h.app.request(`${PUBLIC_URL}/decide/${o.t ?? token}`, { method: "POST", headers, body });
};

beforeEach(async () => {
  h = decideHarness({ publicUrl: PUBLIC_URL });
  token = await h.mint();
});

describe("GET /decide/<token>", () => {
  it("shows the calls and the form, with strict headers, and changes nothing", async () => {
    const res = await get();
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("issue_refund");
    expect(html).toContain("A-1001");
    expect(html).toContain('name="decision" value="approve"');
    expect(html).toContain('name="decision" value="reject"');
    expect(html).toContain("fin1");
    expect(res.headers.get("content-security-policy")).toBe(DECIDE_CSP);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-store");
    await get();
    expect(h.decided).toEqual([]);
    expect((await h.tokens.find(token))?.usedAt).toBeNull();
  });

  it("404 for an unknown or malformed token, with the same headers", async () => {
    for (const t of ["x".repeat(43), "short", "%3Cscript%3E"]) {
      const res = await get(t);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-security-policy")).toBe(DECIDE_CSP);
    }
  });

  it("410 without arguments once expired, closed, or its versions moved", async () => {
    h.open.notice = { ...h.open.notice!, calls: [refundCall({ version: 2 })] };
    let res = await get();
    expect(res.status).toBe(410);
    let html = await res.text();
    expect(html).toContain("changed since this mail was sent");
    expect(html).not.toContain("A-1001");

    h.open.notice = null;
    res = await get();
    expect(res.status).toBe(410);
    expect(await res.text()).toContain("no longer waiting");

    const t2 = await (async () => {
      h = decideHarness({ publicUrl: PUBLIC_URL });
      return h.mint();
    })();
    h.clock.advance(3_600_000);
    res = await get(t2);
    expect(res.status).toBe(410);
    html = await res.text();
    expect(html).toContain("deadline has passed");
    expect(html).not.toContain("issue_refund");
  });
});

describe("POST /decide/<token>", () => {
  it("decides once as the token's principal, at the mail's versions; a second POST is 410", async () => {
    const res = await post("decision=reject&reason=Not+this+order");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Rejected as fin1");
    expect(h.decided).toEqual([{ threadId: "thr_1", interruptId: "int_1", principalSub: "fin1", via: "email", decision: "reject", reason: "Not this order", versions: { call_refund_1: 1 } }]);
    const again = await post("decision=approve");
    expect(again.status).toBe(410);
    const html = await again.text();
    expect(html).toContain("used already");
    expect(html).not.toContain("A-1001");
    expect(h.decided).toHaveLength(1);
    expect((await get()).status).toBe(410);
  });

  it("two POSTs at once decide once", async () => {
    const [a, b] = await Promise.all([post("decision=approve"), post("decision=approve")]);
    expect([a.status, b.status].sort()).toEqual([200, 410]);
    expect(h.decided).toHaveLength(1);
  });

  it("refuses another origin, or none, before looking at the token or the form", async () => {
    const refused = [
      { origin: "https://evil.example" },
      { origin: "https://evil.example", site: "same-origin" },
      { origin: "null" },
      { origin: "null", site: "cross-site" },
      { origin: "null", site: "same-site" },
      { origin: null },
      { origin: null, site: "same-origin" },
      { origin: "http://tollgate.example.com" },
    ];
    for (const o of refused) {
      const res = await post("decision=approve", o);
      expect(res.status, JSON.stringify(o)).toBe(403);
      expect(res.headers.get("content-security-policy")).toBe(DECIDE_CSP);
    }
    expect(h.decided).toEqual([]);
    expect((await h.tokens.find(token))?.usedAt).toBeNull();
  });

  it("takes the page's own form as a browser sends it under no-referrer: Origin null, Sec-Fetch-Site same-origin", async () => {
    expect((await post("decision=approve", { origin: "null", site: "same-origin" })).status).toBe(200);
    expect(h.decided).toHaveLength(1);
  });

  it("refuses a bad form without using the link", async () => {
    expect((await post("decision=maybe")).status).toBe(400);
    expect((await post(`decision=reject&reason=${"x".repeat(501)}`)).status).toBe(400);
    expect((await post('{"decision":"approve"}', { type: "application/json" })).status).toBe(400);
    expect((await post(`decision=reject&reason=${"x".repeat(9000)}`)).status).toBe(413);
    expect(h.decided).toEqual([]);
    expect((await post("decision=approve")).status).toBe(200);
  });

  it("unknown token → 404; a link whose own life ended (its interrupt's links closed, its deadline passed) → 410, the gate not asked", async () => {
    expect((await post("decision=approve", { t: "y".repeat(43) })).status).toBe(404);
    await h.tokens.closeInterrupt("int_1", h.clock.now());
    const closed = await post("decision=approve");
    expect([closed.status, await closed.text()]).toEqual([410, expect.stringContaining("no longer waiting")]);
    const late = await h.mint("fin2");
    const swept = await h.mint("ops");
    h.clock.advance(3_600_000);
    const expired = await post("decision=approve", { t: late });
    expect([expired.status, await expired.text()]).toEqual([410, expect.stringContaining("deadline has passed")]);
    // Closed by the sweep after its deadline: still expired, as the API says before the sweep and after it.
    await h.tokens.closeInterrupt("int_1", h.clock.now());
    const afterSweep = await post("decision=approve", { t: swept });
    expect([afterSweep.status, await afterSweep.text()]).toEqual([410, expect.stringContaining("deadline has passed")]);
    expect(h.decided).toEqual([]);
  });

  it("whether the interrupt still waits at the mail's versions is the gate's to say: the POST asks it, and renders its answer", async () => {
    // The page would show this link as stale; the POST does not judge that itself.
    h.open.notice = { ...h.open.notice!, calls: [refundCall({ version: 2 })] };
    h.answer.next = { ok: false, code: "call_changed", message: "call changed" };
    const stale = await post("decision=approve");
    expect([stale.status, await stale.text()]).toEqual([410, expect.stringContaining("changed since")]);
    expect(h.decided).toEqual([expect.objectContaining({ decision: "approve", versions: { call_refund_1: 1 } })]);
    // Closed while the mail waited, or out of the principal's sight by now: the gate says so, the page says closed.
    h.open.notice = null;
    for (const code of ["not_waiting", "stale_interrupt", "thread_not_found"]) {
      const t = await h.tokens.issue({ principalSub: "fin1", threadId: "thr_1", interruptId: "int_1", versions: { call_refund_1: 1 }, expiresAt: h.clock.now() + 60_000 }, h.clock.now());
      h.answer.next = { ok: false, code, message: code };
      const res = await post("decision=approve", { t });
      expect([code, res.status, await res.text()]).toEqual([code, 410, expect.stringContaining("no longer waiting")]);
    }
    // The calls decided already, or approved by this person already: the interrupt may still wait for others, and the page does not say it does not.
    const decidedLink = await h.tokens.issue({ principalSub: "fin1", threadId: "thr_1", interruptId: "int_1", versions: { call_refund_1: 1 }, expiresAt: h.clock.now() + 60_000 }, h.clock.now());
    h.answer.next = { ok: false, code: "already_decided", message: "already_decided" };
    const decided = await post("decision=approve", { t: decidedLink });
    const decidedText = await decided.text();
    expect([decided.status, decidedText]).toEqual([410, expect.stringContaining("already decided, or already approved by you")]);
    expect(decidedText).not.toContain("no longer waiting");
    h.answer.next = { ok: false, code: "approval_expired", message: "Approval window closed" };
    const t = await h.tokens.issue({ principalSub: "fin1", threadId: "thr_1", interruptId: "int_1", versions: { call_refund_1: 1 }, expiresAt: h.clock.now() + 60_000 }, h.clock.now());
    const gone = await post("decision=approve", { t });
    expect([gone.status, await gone.text()]).toEqual([410, expect.stringContaining("deadline has passed")]);
    expect(h.decided).toHaveLength(6);
  });

  it("maps the gate's refusals: gone codes → 410, others → 403 with its message; the link stays used", async () => {
    h.answer.next = { ok: false, code: "call_changed", message: "call changed" };
    const stale = await post("decision=approve");
    expect(stale.status).toBe(410);
    expect(await stale.text()).toContain("changed since");

    const t2 = await h.mint("fin2");
    h.answer.next = { ok: false, code: "forbidden", message: "Four eyes: <b>not you</b>" };
    const forbidden = await post("decision=approve", { t: t2 });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.text()).toContain("Four eyes: &lt;b&gt;not you&lt;/b&gt;");
    expect((await post("decision=approve", { t: t2 })).status).toBe(410);
  });

  it("gives the link back when the decision could not be tried (busy, storage, a throw)", async () => {
    h.answer.next = { ok: false, code: "storage_unavailable", message: "db down" };
    expect((await post("decision=approve")).status).toBe(503);
    h.answer.next = new Error("boom");
    expect((await post("decision=approve")).status).toBe(503);
    expect((await post("decision=approve")).status).toBe(200);
    expect(h.decided).toHaveLength(3);
  });

  it("no log line holds the token, access lines included", async () => {
    await get();
    await post("decision=approve", { origin: "https://evil.example" });
    h.answer.next = new Error("boom");
    await post("decision=approve");
    await post("decision=approve");
    await post("decision=approve");
    const log = h.logLines.join("");
    expect(log).toContain('"path":"/decide/[token]"');
    expect(log).toContain("email decision taken");
    expect(log).toContain("email decision failed");
    expect(log).not.toContain(token);
  });
});
