/**
 * Email as a face on the gate, against the real server on SQLite and PostgreSQL: mails go out
 * through real SMTP (an `smtp-server` in the test process), the link is taken from the mail, its
 * GET decides nothing and its POST decides through the entry `POST …/resume` uses. So four eyes,
 * roles, a quorum from two mailboxes, versions after an edit, expiry and exactly once are the
 * gate's own rules; links die when the interrupt closes, whoever closed it; no token in any log.
 * One case opens the link in Chromium against the server on a socket.
 */
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { serve, type ServerType } from "@hono/node-server";
import { afterEach, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { createTollgate, type Tollgate } from "../../src/index.js";
import { jsonLogger } from "../../src/logger.js";
import type { InterruptPayload } from "../../src/protocol/index.js";
import { loadConfig } from "../../src/config.js";
import { type CaughtMail, type SmtpCatcher, startSmtpCatcher } from "../fixtures/smtp/smtp-catcher.js";
import { browserAvailable, launchChromium, pageInNewContext, skipBrowserSuite } from "../helpers/browser.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { inProcessTollgates } from "../helpers/in-process-tollgate.js";
import { ensurePgDatabase, pgTestClusterUrl } from "../helpers/pg-test-db.js";
import { within } from "../helpers/within.js";
import { ACCOUNT, refundDesk } from "../fixtures/refund-desk.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { decideViaChannel } from "../../src/runs/index.js";

const open = inProcessTollgates();
let smtp: SmtpCatcher | undefined;
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
});

const PUBLIC_URL = "https://tollgate.example.com";
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user", "finance"], email: "alice@example.com" },
  "tok-ops-000001": { sub: "ops", roles: ["approver"], email: "ops@example.com" },
  "tok-fin1-0001": { sub: "fin1", roles: ["approver", "finance"], email: "fin1@example.com" },
  "tok-fin2-0001": { sub: "fin2", roles: ["approver", "finance"], email: "Fin2@Example.com" },
  "tok-bob-00001": { sub: "bob", roles: ["user"], email: "bob@example.com" },
  "tok-metrics-01": { sub: "prom", roles: ["metrics"] },
};

/** The refund tool and model of this test; `refunds` and `amounts`: what ran in it. */
let desk = refundDesk();
let refunds = desk.ran.orders;
let amounts = desk.ran.cents;
function freshDesk(): void {
  desk = refundDesk();
  refunds = desk.ran.orders;
  amounts = desk.ran.cents;
}

/** The environment every server here runs with, mail to `smtpUrl`. */
const emailEnv = (smtpUrl: string, publicUrl = PUBLIC_URL) => ({
  AUTH_TOKENS: JSON.stringify(TOKENS),
  AUTH_ROLES: "finance",
  SMTP_URL: smtpUrl,
  EMAIL_FROM: "Tollgate <tollgate@example.com>",
  PUBLIC_URL: publicUrl,
  WEBHOOK_BACKOFF_BASE_MS: "20",
  WEBHOOK_BACKOFF_CAP_MS: "50",
  WEBHOOK_SWEEP_MS: "50",
  EXPIRY_SWEEP_MS: "3600000",
});

/** In the postgres project, a database of its own on the project's cluster. */
async function databaseEnv(): Promise<Record<string, string>> {
  const cluster = pgTestClusterUrl();
  return cluster ? { DATABASE_URL: await ensurePgDatabase(cluster, fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-email-"))) } : {};
}

interface Rig {
  t: Tollgate;
  smtp: SmtpCatcher;
  logLines: string[];
  client: (token: string) => TollgateClient;
  /** GET or POST a link as a browser on PUBLIC_URL's page would. */
  get(link: string): Promise<Response>;
  post(link: string, form: Record<string, string>, o?: { origin?: string }): Promise<Response>;
}

/** With auth off: no tokens, the directory alone says who the mails reach. */
const noAuthEnv = (smtpUrl: string) => {
  const { AUTH_TOKENS: _tokens, ...rest } = emailEnv(smtpUrl);
  return { ...rest, AUTH_DIRECTORY: JSON.stringify(Object.values(TOKENS)) };
};

async function rig(o: { clock?: FakeClock; env?: Record<string, string>; authOff?: boolean; model?: () => ScriptedChatModel } = {}): Promise<Rig> {
  freshDesk();
  smtp = await startSmtpCatcher();
  const logLines: string[] = [];
  const t = await open({
    env: { ...(await databaseEnv()), ...(o.authOff ? noAuthEnv(smtp.url) : emailEnv(smtp.url)), ...o.env },
    ...(o.clock ? { clock: o.clock } : {}),
    log: jsonLogger({ level: "debug", destination: { write: (line: string) => logLines.push(line) } }),
    model: (o.model ?? desk.model)(),
    tools: () => [desk.refund],
    systemPrompt: "",
  });
  const pathOf = (link: string) => new URL(link).pathname;
  return {
    t,
    smtp,
    logLines,
    client: (token) => new TollgateClient({ baseUrl: "http://localhost", token, fetch: async (url, init) => t.app.request(url, init) }),
    get: async (link) => t.app.request(pathOf(link)),
    post: async (link, form, p = {}) =>
      t.app.request(pathOf(link), {
        method: "POST",
        headers: { origin: p.origin ?? PUBLIC_URL, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      }),
  };
}

/** The link in a mail. */
function linkIn(mail: CaughtMail): string {
  const m = mail.text.match(/(https?:\/\/[^\s]+\/decide\/[A-Za-z0-9_-]{43})/);
  if (!m) throw new Error(`no decide link in the mail: ${mail.text.slice(0, 200)}`);
  return m[1]!;
}

/** alice asks for a refund; resolves with the interrupt. */
async function asked(r: Rig, thread: string, order: string, cents: number): Promise<InterruptPayload> {
  const last = (await r.client("tok-alice-0001").run(thread, `refund ${order} ${cents}`).collect()).at(-1);
  if (last?.type !== "interrupt") throw new Error(`expected an interrupt, got ${JSON.stringify(last)}`);
  return last;
}

const threadOf = async (r: Rig, id: string) => r.client("tok-alice-0001").getThread(id);
const settled = async (r: Rig, id: string) => {
  for (;;) {
    const th = await threadOf(r, id);
    if (th.status !== "running") return th;
    await new Promise((res) => setTimeout(res, 10));
  }
};
/** Resolves once no delivery of the thread is still owed or in flight. */
const allSent = async (r: Rig, id: string) => {
  while ((await r.t.store.webhooks.list(id)).some((d) => d.status === "pending")) await new Promise((res) => setTimeout(res, 5));
};
const metricsOf = async (r: Rig) => (await r.t.app.request("/metrics", { headers: { authorization: "Bearer tok-metrics-01" } })).text();

describe("the request mail", () => {
  it("goes to each person the gate lets decide, once each, never the requester; masked; with a link that works once", async () => {
    const r = await rig();
    expect(r.t.store.kind).toBe(pgTestClusterUrl() ? "postgres" : "sqlite");
    const interrupt = await asked(r, "ask", "A-1", 100);
    const [ops, fin1, fin2] = await Promise.all(["ops@example.com", "fin1@example.com", "fin2@example.com"].map((a) => r.smtp.nextTo(a)));
    // Four eyes: the owner and requester get none; bob may not decide.
    expect(r.smtp.mails.flatMap((m) => m.to).sort()).toEqual(["fin1@example.com", "fin2@example.com", "ops@example.com"]);
    expect(ops!.subject).toBe("Approval needed: refund_order");
    expect(ops!.from).toBe("tollgate@example.com");
    expect(ops!.text).toContain("Needs an approver");
    expect(ops!.text).toContain(interrupt.expires_at);
    expect(ops!.text).toContain("version 1");
    // Masked, as on every face: not in any mail.
    expect(r.smtp.mails.map((m) => m.raw).join("\n")).not.toContain("DE89");
    // Each link is that person's own.
    expect(new Set([linkIn(ops!), linkIn(fin1!), linkIn(fin2!)]).size).toBe(3);
    expect(linkIn(ops!).startsWith(`${PUBLIC_URL}/decide/`)).toBe(true);
  });
});

describe("deciding from a link", () => {
  it("opening decides nothing; another site's form is refused; Approve runs the refund once; the link and the others' are dead after", async () => {
    const r = await rig();
    const interrupt = await asked(r, "ok", "A-2", 100);
    const link = linkIn(await r.smtp.nextTo("ops@example.com"));
    const other = linkIn(await r.smtp.nextTo("fin1@example.com"));
    // A mail scanner, then the person: nothing changes.
    for (let i = 0; i < 2; i++) {
      const page = await r.get(link);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("refund_order");
      expect(html).toContain("You decide as <strong>ops</strong>");
      expect(html).not.toContain("DE89");
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    }
    expect((await threadOf(r, "ok")).status).toBe("waiting_human");
    expect((await r.post(link, { decision: "approve" }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await threadOf(r, "ok")).status).toBe("waiting_human");

    const taken = await r.post(link, { decision: "approve" });
    expect(taken.status).toBe(200);
    expect(await taken.text()).toContain("Approved as ops");
    expect((await settled(r, "ok")).last_outcome).toBe("completed");
    expect(refunds).toEqual(["A-2"]);
    expect((await r.post(link, { decision: "approve" })).status).toBe(410);
    const closed = await r.get(other);
    expect([closed.status, await closed.text()]).toEqual([410, expect.stringContaining("no longer waiting")]);
    expect(refunds).toEqual(["A-2"]);

    const audit = (await r.client("tok-alice-0001").audit("ok")).entries;
    expect(audit.filter((e) => e.decision === "approved")).toEqual([expect.objectContaining({ by: "ops", via: "email", call_id: interrupt.calls[0]!.call_id })]);
    expect(await metricsOf(r)).toMatch(/tollgate_approvals_total\{decision="approved",via="email"\} 1\n/);
    // No log line holds a token, whatever it logged.
    const tokens = [link, other].map((l) => l.split("/").pop()!);
    for (const token of tokens) expect(r.logLines.join("\n")).not.toContain(token);
  });

  it("the same link posted twice at once decides once", async () => {
    const r = await rig();
    await asked(r, "twice", "A-3", 100);
    const link = linkIn(await r.smtp.nextTo("fin1@example.com"));
    const answers = await Promise.all([r.post(link, { decision: "approve" }), r.post(link, { decision: "approve" })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 410]);
    expect((await settled(r, "twice")).last_outcome).toBe("completed");
    expect(refunds).toEqual(["A-3"]);
  });

  it("Reject with a reason: nothing runs, the audit keeps the reason, credited to the link's principal", async () => {
    const r = await rig();
    await asked(r, "rej", "A-4", 100);
    const link = linkIn(await r.smtp.nextTo("ops@example.com"));
    const res = await r.post(link, { decision: "reject", reason: "duplicate order" });
    expect([res.status, await res.text()]).toEqual([200, expect.stringContaining("Rejected as ops")]);
    expect((await settled(r, "rej")).last_outcome).not.toBe("waiting_human");
    expect(refunds).toEqual([]);
    const audit = (await r.client("tok-alice-0001").audit("rej")).entries;
    expect(audit).toEqual([expect.objectContaining({ decision: "rejected", reason: "duplicate order", by: "ops", via: "email" })]);
  });

  it("a quorum from two mailboxes: only the role's holders are mailed; the first approval is recorded and runs nothing; the second runs the refund once", async () => {
    const r = await rig();
    await asked(r, "quorum", "A-5", 60_000);
    const [fin1, fin2] = await Promise.all([r.smtp.nextTo("fin1@example.com"), r.smtp.nextTo("fin2@example.com")]);
    expect(fin1!.text).toContain("Needs 2 of finance");
    const first = await r.post(linkIn(fin1!), { decision: "approve" });
    expect([first.status, await first.text()]).toEqual([200, expect.stringContaining("still waits")]);
    expect((await threadOf(r, "quorum")).status).toBe("waiting_human");
    expect(refunds).toEqual([]);
    // fin2's link still stands: a partial approval sends no new mail and kills no link.
    expect((await r.get(linkIn(fin2!))).status).toBe(200);
    expect((await r.post(linkIn(fin2!), { decision: "approve" })).status).toBe(200);
    expect((await settled(r, "quorum")).last_outcome).toBe("completed");
    expect(refunds).toEqual(["A-5"]);
    // ops (no finance) and alice (the requester) were never mailed.
    expect(r.smtp.mails.flatMap((m) => m.to).sort()).toEqual(["fin1@example.com", "fin2@example.com"]);
    const audit = (await r.client("tok-alice-0001").audit("quorum")).entries;
    expect(audit.map((e) => [e.by, e.decision, e.via])).toEqual([
      ["fin1", "approved", "email"],
      ["fin2", "approved", "email"],
    ]);
  });

  it("an edit in a quorum mails the others again; the old link is stale (410), the new one decides the edited call", async () => {
    const r = await rig();
    const interrupt = await asked(r, "edit", "A-6", 60_000);
    const callId = interrupt.calls[0]!.call_id;
    const oldLink = linkIn(await r.smtp.nextTo("fin2@example.com"));
    await r.smtp.nextTo("fin1@example.com");
    const editing = await r.t.app.request("/threads/edit/resume", {
      method: "POST",
      headers: { authorization: "Bearer tok-fin1-0001", "content-type": "application/json" },
      body: JSON.stringify({ interrupt_id: interrupt.interrupt_id, decisions: [{ call_id: callId, approved: true, edited_args: { cents: 55_000 } }] }),
    });
    expect(editing.status).toBe(202);
    const again = await r.smtp.nextTo("fin2@example.com");
    expect(again.subject).toBe("Approval needed again (edited): refund_order");
    expect(again.text).toContain("version 2");
    const stale = await r.post(oldLink, { decision: "approve" });
    expect([stale.status, await stale.text()]).toEqual([410, expect.stringContaining("changed since this mail was sent")]);
    expect(refunds).toEqual([]);
    expect((await r.post(linkIn(again), { decision: "approve" })).status).toBe(200);
    expect((await settled(r, "edit")).last_outcome).toBe("completed");
    expect([refunds, amounts]).toEqual([["A-6"], [55_000]]);
    // The editor has decided: no second mail to fin1.
    expect(r.smtp.mails.filter((m) => m.to.includes("fin1@example.com"))).toHaveLength(1);
  });

  it("past the deadline the link is dead (410 expired), and posting it runs nothing", async () => {
    const clock = new FakeClock(Date.now());
    const r = await rig({ clock });
    const interrupt = await asked(r, "late", "A-7", 100);
    const link = linkIn(await r.smtp.nextTo("ops@example.com"));
    clock.advance(new Date(interrupt.expires_at).getTime() - clock.now());
    const late = await r.post(link, { decision: "approve" });
    expect([late.status, await late.text()]).toEqual([410, expect.stringContaining("deadline has passed")]);
    await r.t.expiry.sweep();
    expect((await settled(r, "late")).last_outcome).not.toBe("completed");
    expect(refunds).toEqual([]);
  });
});

describe("one answer on every face, auth off", () => {
  /** A model that asks for two refunds in one turn: "refunds <order> <cents> <order> <cents>". */
  const twoRefunds = () =>
    new ScriptedChatModel({
      rules: [
        {
          when: /refunds (\S+) (\d+) (\S+) (\d+)/,
          reply: ({ match }) => ({
            toolCalls: [
              { name: "refund_order", args: { order_id: match[1]!, cents: Number(match[2]), account: ACCOUNT } },
              { name: "refund_order", args: { order_id: match[3]!, cents: Number(match[4]), account: ACCOUNT } },
            ],
          }),
          then: "done",
        },
      ],
    });

  it("a quorum call closed by one approval through the API: the link approves the call still open, as the API would", async () => {
    const r = await rig({ authOff: true, model: twoRefunds });
    const last = (await r.client("any").run("off", "refunds A-20 60000 A-21 100").collect()).at(-1);
    if (last?.type !== "interrupt") throw new Error(`expected an interrupt, got ${JSON.stringify(last)}`);
    const [large, small] = last.calls;
    expect([large!.policy, small!.policy]).toEqual(["quorum", "approver"]);
    const link = linkIn(await r.smtp.nextTo("fin2@example.com"));
    // With auth off one decision suffices: the API's approval closes the quorum call, the other still waits.
    const partial = await r.t.app.request("/threads/off/resume", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ interrupt_id: last.interrupt_id, decisions: [{ call_id: large!.call_id, approved: true }] }),
    });
    expect([partial.status, await partial.json()]).toEqual([202, { status: "waiting_human", waiting_on: [small!.call_id], run_id: null }]);
    // The mail showed both calls: Approve there is an approval of the one still open, not a refusal.
    const taken = await r.post(link, { decision: "approve" });
    expect([taken.status, await taken.text()]).toEqual([200, expect.stringContaining("Approved as fin2")]);
    expect((await settled(r, "off")).last_outcome).toBe("completed");
    expect(refunds.sort()).toEqual(["A-20", "A-21"]);
    const audit = (await r.client("any").audit("off")).entries;
    expect(audit.filter((e) => e.decision === "approved").map((e) => [e.call_id, e.by, e.via])).toEqual([
      [large!.call_id, "anonymous", "api"],
      [small!.call_id, "fin2", "email"],
    ]);
  });
});

describe("the door holds a channel's decision to the resume's schema", () => {
  it("a reason longer than the API takes, or a version that is no version, is refused (400) and decides nothing", async () => {
    const r = await rig();
    const interrupt = await asked(r, "schema", "A-30", 100);
    const callId = interrupt.calls[0]!.call_id;
    const ops = { sub: "ops", roles: ["approver"] };
    const base = { threadId: "schema", interruptId: interrupt.interrupt_id, principal: ops, via: "email" as const };
    const long = await decideViaChannel({ runs: r.t.runs }, { ...base, decision: { approve: false, reason: "x".repeat(2001) }, versions: { [callId]: 1 } });
    expect(long).toMatchObject({ ok: false, code: "invalid_request" });
    const odd = await decideViaChannel({ runs: r.t.runs }, { ...base, decision: { approve: true }, versions: { [callId]: 0.5 } });
    expect(odd).toMatchObject({ ok: false, code: "invalid_request" });
    const none = await decideViaChannel({ runs: r.t.runs }, { ...base, decision: { approve: true }, versions: {} });
    expect(none).toMatchObject({ ok: false, code: "invalid_request" });
    expect((await threadOf(r, "schema")).status).toBe("waiting_human");
    expect((await r.client("tok-alice-0001").audit("schema")).entries).toEqual([]);
    // The same decision within the schema is taken.
    expect(await decideViaChannel({ runs: r.t.runs }, { ...base, decision: { approve: false, reason: "x".repeat(2000) }, versions: { [callId]: 1 } })).toMatchObject({ ok: true });
  });
});

describe("the links follow the interrupt", () => {
  it("a decision made through the API kills every link: the page says it is no longer waiting", async () => {
    const r = await rig();
    const interrupt = await asked(r, "api", "A-8", 100);
    const link = linkIn(await r.smtp.nextTo("fin1@example.com"));
    await r.client("tok-ops-000001").resume("api", interrupt.interrupt_id, { decisions: [{ call_id: interrupt.calls[0]!.call_id, approved: true }] }).collect();
    expect(refunds).toEqual(["A-8"]);
    const gone = await r.get(link);
    expect(gone.status).toBe(410);
    expect((await r.post(link, { decision: "approve" })).status).toBe(410);
    expect(refunds).toEqual(["A-8"]);
  });

  it("an escalation mails again (Still waiting) to who has not yet approved; the first links still work", async () => {
    const clock = new FakeClock(Date.now());
    const r = await rig({ clock, env: { APPROVAL_ESCALATE_SECONDS: "60" } });
    await asked(r, "escalate", "A-11", 60_000);
    const [fin1, fin2] = await Promise.all([r.smtp.nextTo("fin1@example.com"), r.smtp.nextTo("fin2@example.com")]);
    expect((await r.post(linkIn(fin1!), { decision: "approve" })).status).toBe(200);
    // Every send recorded before time jumps: a jump past a claim's lease would send it again.
    await within(allSent(r, "escalate"), { ms: 5_000, failure: "the mails' outcomes were not recorded" });
    clock.advance(61_000);
    await r.t.expiry.sweep();
    const again = await r.smtp.nextTo("fin2@example.com");
    expect(again.subject).toBe("Still waiting for your approval: refund_order");
    expect(again.text).toContain("approved by fin1");
    // fin1 approved already: nothing more to decide, no second mail.
    expect(r.smtp.mails.filter((m) => m.to.includes("fin1@example.com"))).toHaveLength(1);
    expect((await r.post(linkIn(fin2!), { decision: "approve" })).status).toBe(200);
    expect((await settled(r, "escalate")).last_outcome).toBe("completed");
    expect(refunds).toEqual(["A-11"]);
    // The escalation's own link died with the interrupt.
    expect((await r.get(linkIn(again))).status).toBe(410);
  });

  it("SMTP refusing for a while, then back: the mail is retried until accepted; the run never waited", async () => {
    const r = await rig();
    r.smtp.failNext(2);
    const interrupt = await asked(r, "down", "A-9", 100);
    // The interrupt reached its requester while the mail server was refusing.
    expect(interrupt.calls[0]!.name).toBe("refund_order");
    const mail = await r.smtp.nextTo("ops@example.com");
    expect(r.smtp.refused).toBe(2);
    expect((await r.post(linkIn(mail), { decision: "approve" })).status).toBe(200);
    expect((await settled(r, "down")).last_outcome).toBe("completed");
    const counted = (await metricsOf(r)).split("\n").filter((l) => l.startsWith('tollgate_channel_deliveries_total{channel="email"'));
    expect(counted).toContain('tollgate_channel_deliveries_total{channel="email",outcome="retry"} 2');
    // A refused send's token was forgotten: the one link that works is in the mail that arrived.
    expect(refunds).toEqual(["A-9"]);
  });
});

const avail = browserAvailable();
describe.skipIf(skipBrowserSuite("email approvals in Chromium", avail))("the link in a browser", () => {
  let server: ServerType | undefined;
  let t: Tollgate | undefined;
  afterEach(async () => {
    await t?.close();
    await new Promise((res) => (server ? server.close(res) : res(undefined)));
    server = t = undefined;
  });

  it("the page opens under its CSP without a violation; Approve runs the refund once; the page says so", async () => {
    freshDesk();
    smtp = await startSmtpCatcher();
    // The port first: PUBLIC_URL must name it.
    const holder: { fetch?: (req: Request) => Response | Promise<Response> } = {};
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: (req) => holder.fetch!(req), hostname: "127.0.0.1", port: 0 }, () => resolve(s));
    });
    const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-email-browser-"));
    t = await createTollgate({
      config: loadConfig({ ...(await databaseEnv()), ...emailEnv(smtp.url, publicUrl), DATA_DIR: dataDir }),
      log: jsonLogger({ level: "silent", destination: { write: () => {} } }),
      model: desk.model(),
      tools: () => [desk.refund],
      systemPrompt: "",
    });
    const app = t.app;
    holder.fetch = (req) => app.fetch(req);
    const client = new TollgateClient({ baseUrl: publicUrl, token: "tok-alice-0001" });
    const last = (await client.run("browser", "refund A-10 100").collect()).at(-1);
    expect(last?.type).toBe("interrupt");
    const link = linkIn(await smtp.nextTo("ops@example.com"));

    const browser = await launchChromium();
    const errors: string[] = [];
    try {
      const { page } = await pageInNewContext(browser, { onError: (m) => errors.push(m) });
      expect((await page.goto(link))?.status()).toBe(200);
      expect(refunds).toEqual([]);
      await page.getByRole("button", { name: "Approve", exact: true }).click();
      await page.getByRole("heading", { name: "Approved" }).waitFor();
      await within(
        (async () => {
          while ((await client.getThread("browser")).status !== "idle") await new Promise((res) => setTimeout(res, 10));
        })(),
        { ms: 10_000, failure: "the approved run did not finish" },
      );
      expect(refunds).toEqual(["A-10"]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
