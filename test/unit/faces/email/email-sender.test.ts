/**
 * The email lane's sender through real SMTP: nodemailer to an in-process smtp-server. One mail per
 * recipient with a link whose token is stored only as its hash; a refused mail forgets its token
 * and the outbox's retry sends a fresh one; a notice past its deadline or closed sends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  emailDeliveries,
  emailSender,
  smtpMailer,
  type Mailer,
} from "../../../../src/faces/email/index.js";
import { hashDecisionToken, MemoryDecisionTokenStore, type WebhookDelivery } from "../../../../src/store/index.js";
import { type SmtpCatcher, SMTP_PASS, startSmtpCatcher } from "../../../fixtures/smtp/smtp-catcher.js";
import { notice } from "./notice-fixture.js";

const PUBLIC_URL = "https://tollgate.example.com";
const LINK = /https:\/\/tollgate\.example\.com\/decide\/([A-Za-z0-9_-]{43})/;
let smtp: SmtpCatcher;
let mailer: Mailer;

beforeAll(async () => {
  smtp = await startSmtpCatcher();
  mailer = smtpMailer({ smtpUrl: smtp.url, from: "Tollgate <tollgate@example.com>" });
});
afterAll(async () => {
  mailer?.close();
  await smtp?.close();
});

const delivery = (body: string): WebhookDelivery => ({ id: "d1", thread_id: "thr_1", seq: 1, body, attempts: 1, next_attempt_at: 0, status: "pending", last_error: null, created_at: 0, lane: "email", ref: null, receipt: null });
const noSignal = { signal: new AbortController().signal, receipt: async () => undefined };

describe("emailSender over SMTP", () => {
  it("mails each recipient a link bound to them, the interrupt and the versions shown", async () => {
    const tokens = new MemoryDecisionTokenStore();
    const now = Date.now();
    const n = notice(now);
    const send = emailSender({ mailer, tokens, publicUrl: PUBLIC_URL, now: () => now });
    const bodies = emailDeliveries(n, [
      { sub: "fin1", email: "fin1@example.com" },
      { sub: "fin2", email: "Fin2@Example.com" },
    ]);
    expect(bodies.map((b) => b.ref)).toEqual(["int_1:fin1", "int_1:fin2"]);
    for (const b of bodies) expect(b.body).not.toMatch(LINK);
    const results = await Promise.all(bodies.map((b) => send(delivery(b.body), noSignal)));
    expect(results.every((r) => "receipt" in r && r.receipt)).toBe(true);

    const m1 = await smtp.nextTo("fin1@example.com");
    const m2 = await smtp.nextTo("fin2@example.com");
    expect(m1.from).toBe("tollgate@example.com");
    expect(m1.subject).toBe("Approval needed: issue_refund");
    expect(m1.text).toContain("A-1001");
    expect(m1.html).toContain("A-1001");
    const t1 = m1.text.match(LINK)![1]!;
    const t2 = m2.text.match(LINK)![1]!;
    expect(m1.html).toContain(`/decide/${t1}`);
    expect(t1).not.toBe(t2);
    expect(await tokens.find(t1)).toMatchObject({ tokenHash: hashDecisionToken(t1), principalSub: "fin1", interruptId: "int_1", versions: { call_refund_1: 1 }, expiresAt: Date.parse(n.expires_at) });
    expect((await tokens.find(t2))?.principalSub).toBe("fin2");
  });

  it("a refused mail forgets its token and says why without the message; the retry mails a fresh link", async () => {
    const tokens = new MemoryDecisionTokenStore();
    const now = Date.now();
    const send = emailSender({ mailer, tokens, publicUrl: PUBLIC_URL, now: () => now });
    const [b] = emailDeliveries(notice(now), [{ sub: "fin3", email: "fin3@example.com" }]);
    smtp.failNext(1);
    const failed = await send(delivery(b!.body), noSignal);
    expect(failed).toEqual({ error: expect.stringMatching(/^smtp: 451/) });
    expect(JSON.stringify(failed)).not.toContain(SMTP_PASS);
    expect((tokens as unknown as { rows: Map<string, unknown> }).rows.size).toBe(0);
    const ok = await send(delivery(b!.body), noSignal);
    expect("receipt" in ok).toBe(true);
    const m = await smtp.nextTo("fin3@example.com");
    expect(await tokens.find(m.text.match(LINK)![1]!)).toBeDefined();
  });

  it("sends nothing for a notice past its deadline or an interrupt that closed meanwhile", async () => {
    const tokens = new MemoryDecisionTokenStore();
    const now = Date.now();
    const before = smtp.mails.length;
    const [b] = emailDeliveries(notice(now), [{ sub: "fin4", email: "fin4@example.com" }]);
    const late = emailSender({ mailer, tokens, publicUrl: PUBLIC_URL, now: () => now + 3_600_000 });
    expect(await late(delivery(b!.body), noSignal)).toEqual({ receipt: "skipped: expired" });
    const closed = emailSender({ mailer, tokens, publicUrl: PUBLIC_URL, now: () => now, stillShown: async () => false });
    expect(await closed(delivery(b!.body), noSignal)).toEqual({ receipt: "skipped: no longer waiting as shown" });
    expect(smtp.mails.length).toBe(before);
  });

  it("a dead SMTP server fails the attempt within its timeout", async () => {
    const dead = smtpMailer({ smtpUrl: "smtp://127.0.0.1:1", from: "t@example.com", timeouts: { connectionMs: 1_000 } });
    const send = emailSender({ mailer: dead, tokens: new MemoryDecisionTokenStore(), publicUrl: PUBLIC_URL, now: () => Date.now() });
    const [b] = emailDeliveries(notice(Date.now()), [{ sub: "x", email: "x@example.com" }]);
    expect(await send(delivery(b!.body), noSignal)).toEqual({ error: expect.stringMatching(/^smtp: /) });
    dead.close();
  });
});
