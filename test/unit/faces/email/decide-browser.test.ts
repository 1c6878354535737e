/**
 * The mailed link opened as a person would: the mail goes out through real SMTP, the link is taken
 * from it and opened in Chromium against the decide routes on a real socket. The page loads under
 * its CSP without a violation; opening it decides nothing; the form's Approve decides once; posting
 * it again is 410; another site's form is refused; no log line holds the token.
 * Slow-ish (a browser): about 3 s.
 */
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DECIDE_CSP, emailDeliveries, emailSender, smtpMailer, type Mailer } from "../../../../src/faces/email/index.js";
import type { WebhookDelivery } from "../../../../src/store/index.js";
import { browserAvailable, launchChromium, pageInNewContext, skipBrowserSuite } from "../../../helpers/browser.js";
import { type SmtpCatcher, startSmtpCatcher } from "../../../fixtures/smtp/smtp-catcher.js";
import { type DecideHarness, decideHarness } from "./decide-app-fixture.js";

const avail = browserAvailable();
const delivery = (body: string): WebhookDelivery => ({ id: "d1", thread_id: "thr_1", seq: 1, body, attempts: 1, next_attempt_at: 0, status: "pending", last_error: null, created_at: 0, lane: "email", ref: null, receipt: null });

describe.skipIf(skipBrowserSuite("email decide page", avail))("the emailed link in Chromium", () => {
  let smtp: SmtpCatcher;
  let mailer: Mailer;
  let browser: Browser;
  let server: ServerType;
  let h: DecideHarness;
  let publicUrl: string;

  beforeAll(async () => {
    [smtp, browser] = await Promise.all([startSmtpCatcher(), launchChromium()]);
    mailer = smtpMailer({ smtpUrl: smtp.url, from: "tollgate@example.com" });
    // The port first, then the app: PUBLIC_URL must name it.
    const holder: { fetch?: (r: Request) => Response | Promise<Response> } = {};
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: (r) => holder.fetch!(r), hostname: "127.0.0.1", port: 0 }, () => resolve(s));
    });
    publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h = decideHarness({ publicUrl });
    holder.fetch = (r) => h.app.fetch(r);
  });
  afterAll(async () => {
    mailer?.close();
    await Promise.all([smtp?.close(), browser?.close(), new Promise((r) => (server ? server.close(r) : r(undefined)))]);
  });

  it("opens, decides once on Approve, is 410 after, and refuses another site's form", async () => {
    const n = h.open.notice!;
    const send = emailSender({ mailer, tokens: h.tokens, publicUrl, now: () => h.clock.now() });
    const [b] = emailDeliveries(n, [{ sub: "fin1", email: "fin1@example.com" }]);
    expect("receipt" in (await send(delivery(b!.body), { signal: new AbortController().signal, receipt: async () => undefined }))).toBe(true);
    const mail = await smtp.nextTo("fin1@example.com");
    const link = mail.text.match(/(http:\/\/127\.0\.0\.1:\d+\/decide\/[A-Za-z0-9_-]{43})/)![1]!;
    const token = link.split("/").pop()!;

    const errors: string[] = [];
    const { context, page } = await pageInNewContext(browser, { onError: (m) => errors.push(m) });
    try {
      // Opening it, twice (a mail scanner, then the person), changes nothing.
      const first = await page.goto(link);
      expect(first?.status()).toBe(200);
      expect(first?.headers()["content-security-policy"]).toBe(DECIDE_CSP);
      expect(first?.headers()["referrer-policy"]).toBe("no-referrer");
      await page.goto(link);
      expect(h.decided).toEqual([]);
      expect(await page.textContent("body")).toContain("issue_refund");
      expect(await page.textContent("body")).toContain("A-1001");

      // A second tab on the same link, as a person who clicked the mail twice.
      const second = await context.newPage();
      expect((await second.goto(link))?.status()).toBe(200);

      // The person approves through the page's own form.
      await page.fill("#reason", "fine by me");
      const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.click('button[value="approve"]')]);
      expect(answer.status()).toBe(200);
      expect(await page.textContent("h1")).toBe("Approved");
      expect(h.decided).toEqual([{ threadId: "thr_1", interruptId: "int_1", principalSub: "fin1", via: "email", decision: "approve", reason: "fine by me", versions: { call_refund_1: 1 } }]);

      // The other tab's form sent after: the link is used; the page says so and shows no argument.
      const [again] = await Promise.all([second.waitForResponse((r) => r.request().method() === "POST"), second.click('button[value="reject"]')]);
      expect(again.status()).toBe(410);
      expect(await second.textContent("body")).toContain("used already");
      expect(await second.textContent("body")).not.toContain("A-1001");
      expect((await page.goto(link))?.status()).toBe(410);
      expect(h.decided).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }

    // Another site's page posting a form to a fresh link: refused, nothing decided, link unused.
    const fresh = await h.mint("fin2");
    const { context: evilCtx, page: evil } = await pageInNewContext(browser, { onError: () => {} });
    try {
      // 127.0.0.2 is loopback too, but another origin than PUBLIC_URL's.
      const evilServer = `http://127.0.0.2:${new URL(publicUrl).port}`;
      await evil.route(`${evilServer}/attack`, (route) =>
        route.fulfill({
          contentType: "text/html",
          body: `<form method="post" action="${publicUrl}/decide/${fresh}"><input name="decision" value="approve"></form><script>document.forms[0].submit()</script>`,
        }),
      );
      const [res] = await Promise.all([evil.waitForResponse((r) => r.url().includes("/decide/")), evil.goto(`${evilServer}/attack`)]);
      expect(res.status()).toBe(403);
      expect(h.decided).toHaveLength(1);
      expect((await h.tokens.find(fresh))?.usedAt).toBeNull();
    } finally {
      await evilCtx.close();
    }

    const log = h.logLines.join("");
    expect(log).toContain('"path":"/decide/[token]"');
    expect(log).not.toContain(token);
    expect(log).not.toContain(fresh);
  });
});
