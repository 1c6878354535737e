/**
 * The web page at GET / (src/web, built on useTollgate) in a real browser, against the real
 * server and its scripted demo model: what a person sees while an answer streams, while a call
 * waits at the gate, after they approve, reject, edit, stop or reload, when the approval window
 * runs out (also with a laptop clock an hour off), with two people (four eyes), and on a phone-
 * sized screen with the keyboard only and with nothing on top of anything. Selectors are the
 * page's UI contract (accessible names, data-testids, `#thread=<id>`); side effects are checked
 * in the server's database, and the thread's state through the API.
 *
 * One browser for the file, a fresh context per test. One server (slow demo tokens, so a stream
 * can be watched, stopped and reloaded) serves every test whose env is the default; the expiry
 * test and the four-eyes test each get a server of their own. Screenshots of each state go to
 * test-output/screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { nextDemoStep } from "../../src/model/demo-intent.js";
import { assertBrowserAvailable, browserAvailable, launchChromium, skipBrowserSuite } from "../helpers/browser.js";
import { browserProfiles } from "../helpers/browser-profiles.js";
import { layoutSnapshot, overlapsBetween, overlapsWithin } from "../helpers/layout-boxes.js";
import {
  callIdOf,
  chat,
  countdownSeconds,
  getThread,
  lastAssistantText,
  openPage,
  screenshot,
  sendMessage,
  tabTo,
  threadIdFromUrl,
  uniqueThreadId,
  waitForStatus,
  waitForToolStatus,
} from "../helpers/page-driver.js";
import { startServer, type ServerProcess } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";

const avail = browserAvailable();
const skip = skipBrowserSuite("web-page", avail);

/** The demo model's answer to a message with no order id: long enough to watch it stream. */
const HELP = nextDemoStep([]).text;
const REFUND = "refund order A-1002 5 dollars";
const EMAIL = "email the customer of A-1003 that it ships tomorrow";
/** What the demo model puts in send_email (A-1003's seeded customer) and lookup_order returns: masked everywhere people look. */
const SECRET_TO = "alan@example.com";
const SECRET_BODY = "Hello, it ships tomorrow";

/** Ms per demo token on the shared server: HELP (~37 words) streams for ~2 s. */
const TOKEN_DELAY_MS = 60;
/** The short approval window of the expiry test's server. */
const TTL_S = 5;

/** The rows of the sidebar's thread list. */
const THREAD_ROWS = 'nav[aria-label="Threads"] [data-testid="thread-link"]';

const OWNER_TOKEN = "owner-token-olivia-1";
const APPROVER_TOKEN = "approver-token-arthur-1";

describe.skipIf(skip)("the web page in a real browser", () => {
  let browser: Browser;
  let server: ServerProcess; // default env, slow tokens
  let expiryServer: ServerProcess; // short approval window
  let authServer: ServerProcess; // AUTH_TOKENS: an owner and an approver
  let page: Page;
  const { newPage } = browserProfiles(() => browser);

  beforeAll(async () => {
    // Under CI=true the suite is never skipped: a missing browser fails it here, with the reason.
    assertBrowserAvailable(avail);
    [browser, server, expiryServer, authServer] = await Promise.all([
      launchChromium(),
      startServer({ DEMO_TOKEN_DELAY_MS: String(TOKEN_DELAY_MS) }),
      startServer({ APPROVAL_TTL_SECONDS: String(TTL_S), EXPIRY_SWEEP_MS: "200", DEMO_TOKEN_DELAY_MS: "10" }),
      startServer({
        DEMO_TOKEN_DELAY_MS: "40", // slow enough to press Stop on a long answer
        AUTH_TOKENS: JSON.stringify({
          [OWNER_TOKEN]: { sub: "olivia", roles: ["user"] },
          [APPROVER_TOKEN]: { sub: "arthur", roles: ["approver"] },
        }),
      }),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.kill(), expiryServer?.kill(), authServer?.kill()]);
  });

  beforeEach(async () => {
    page = await newPage();
  });

  /** Refund rows the demo tool wrote for this call. */
  function refundsFor(s: ServerProcess, callId: string) {
    const db = openDb(s.dataDir);
    try {
      return db.rows<{ order_id: string; amount_cents: number }>("refunds", "call_id = ?", callId);
    } finally {
      db.close();
    }
  }

  /** Sends the refund request on a fresh thread and waits for its approval card; returns the card and call id. */
  async function refundWaiting(p: Page, threadId?: string) {
    if (threadId !== undefined) await openPage(p, server.url, threadId);
    await sendMessage(p, REFUND);
    const card = chat(p).approvalCard("refund_order");
    await card.waitFor();
    await waitForStatus(p, "waiting_human");
    return { card, callId: await callIdOf(card) };
  }

  it("streams an answer: the text grows while it streams, then it is done and the chat idle", async () => {
    const id = uniqueThreadId("stream");
    await openPage(page, server.url, id);
    await waitForStatus(page, "idle");
    await sendMessage(page, "hello, what can you do?");
    const c = chat(page);
    await c.userMessages.filter({ hasText: "hello, what can you do?" }).waitFor();

    const streaming = c.log.locator('[data-testid="msg-assistant"][data-state="streaming"]');
    await streaming.filter({ hasText: /\S/ }).waitFor();
    await waitForStatus(page, "running");
    const early = await streaming.innerText();
    await screenshot(page, "01-streaming");
    // Longer, and still streaming: the person watches it grow.
    await page.waitForFunction(
      (n) => {
        const el = document.querySelector('[data-testid="msg-assistant"][data-state="streaming"]');
        return el !== null && (el.textContent ?? "").length > n;
      },
      early.length,
    );
    expect(HELP.startsWith(early.trim()), `the streamed start "${early}"`).toBe(true);
    expect(early.trim().length).toBeLessThan(HELP.length);

    await c.log.locator('[data-testid="msg-assistant"][data-state="done"]').waitFor();
    await waitForStatus(page, "idle");
    expect(await c.answers.count()).toBe(1);
    expect((await c.lastAnswer.innerText()).trim()).toBe(HELP);
    expect(await c.sendButton.isVisible()).toBe(true);
    await screenshot(page, "01-stream-done");
  });

  it("approve: the card shows the call, policy and countdown; Approve runs the refund once and the answer follows", async () => {
    const id = uniqueThreadId("approve");
    await openPage(page, server.url, id);
    const { card, callId } = await refundWaiting(page);
    const c = chat(page);

    // What the person decides on: the arguments, who must decide, how long is left.
    await expect.poll(() => card.locator("dl.args").first().innerText()).toMatch(/order_id\s*A-1002[\s\S]*amount_cents\s*500/);
    expect(await card.getByText("Needs an approver", { exact: true }).isVisible()).toBe(true);
    // And the order it would act on (the tool's preview).
    expect(await card.getByTestId("preview").innerText()).toMatch(/total_cents\s*12000[\s\S]*refunded_cents\s*0/);
    const left = countdownSeconds(await card.getByTestId("countdown").innerText());
    // The default 900 s window, less the server clock's uncertainty (its Date header has 1 s
    // resolution) — never more than is left.
    expect(left, "the default 900 s window").toBeGreaterThan(890);
    expect(left, "never more than the window").toBeLessThanOrEqual(900);
    await waitForToolStatus(page, callId, "waiting");
    // The read-only lookup of the same batch already ran.
    await c.toolCardsNamed("lookup_order").and(c.log.locator('[data-status="ok"]')).waitFor();
    for (const name of ["Approve", "Reject", "Edit"]) expect(await card.getByRole("button", { name, exact: true }).isEnabled()).toBe(true);
    await screenshot(page, "02-approval-waiting");
    expect(refundsFor(server, callId), "nothing refunded before the approval").toEqual([]);

    await card.getByRole("button", { name: "Approve", exact: true }).click();
    const done = await waitForToolStatus(page, callId, "ok");
    expect(await done.locator("pre.output").innerText()).toContain('"amount_cents":500');
    await c.answers.filter({ hasText: "Done: refunded $5.00 on A-1002." }).waitFor();
    await waitForStatus(page, "idle");
    expect(await card.count(), "the card is gone once decided").toBe(0);
    await screenshot(page, "02-approved-done");

    const rows = refundsFor(server, callId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ order_id: "A-1002", amount_cents: 500 });
    expect((await getThread(server.url, id)).last_outcome).toBe("completed");
  });

  it("reject with a reason: the card ends rejected, nothing is refunded, and the model's answer says why", async () => {
    const id = uniqueThreadId("reject");
    const { card, callId } = await refundWaiting(page, id);
    await card.getByRole("button", { name: "Reject", exact: true }).click();
    const reason = card.getByLabel("Reason", { exact: true });
    await reason.fill("Customer changed their mind");
    await screenshot(page, "03-reject-reason");
    await card.getByRole("button", { name: "Confirm reject", exact: true }).click();

    const rejected = await waitForToolStatus(page, callId, "rejected");
    expect(await rejected.innerText()).toContain("Rejected: Customer changed their mind");
    await chat(page).answers.filter({ hasText: "I did not refund A-1002. Rejected: Customer changed their mind" }).waitFor();
    await waitForStatus(page, "idle");
    await screenshot(page, "03-rejected");
    expect(refundsFor(server, callId)).toEqual([]);
  });

  it("edit: Approve with edits runs the refund with the new amount and the card says edited", async () => {
    const id = uniqueThreadId("edit");
    const { card, callId } = await refundWaiting(page, id);
    await card.getByRole("button", { name: "Edit", exact: true }).click();
    const amount = card.getByLabel("amount_cents", { exact: true });
    expect(await amount.inputValue(), "prefilled with the call's value").toBe("500");
    await amount.fill("250");
    await screenshot(page, "04-edit-form");
    await card.getByRole("button", { name: "Approve with edits", exact: true }).click();

    const ok = await waitForToolStatus(page, callId, "ok");
    await ok.getByText("edited", { exact: true }).waitFor();
    await chat(page).answers.filter({ hasText: "Done: refunded $2.50 on A-1002." }).waitFor();
    await waitForStatus(page, "idle");
    await screenshot(page, "04-edited-done");
    const rows = refundsFor(server, callId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.amount_cents).toBe(250);
  });

  it("stop mid-stream: the partial answer is marked Stopped with a notice, and the run ended cancelled", async () => {
    const id = uniqueThreadId("stop");
    await openPage(page, server.url, id);
    await sendMessage(page, "tell me everything");
    const c = chat(page);
    await c.log.locator('[data-testid="msg-assistant"][data-state="streaming"]').filter({ hasText: /\S+\s+\S+\s+\S+/ }).waitFor();
    // Time from the click to the stopped answer, measured in the page.
    await page.evaluate(() => {
      const w = window as unknown as { __clickAt?: number; __stoppedAt?: number };
      document.addEventListener("click", () => void (w.__clickAt ??= performance.now()), true);
      new MutationObserver(() => {
        if (w.__stoppedAt === undefined && document.querySelector('[data-testid="msg-assistant"][data-state="stopped"]')) w.__stoppedAt = performance.now();
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await c.stopButton.click();

    const stopped = c.log.locator('[data-testid="msg-assistant"][data-state="stopped"]');
    await stopped.waitFor();
    const ms = await page.evaluate(() => {
      const w = window as unknown as { __clickAt?: number; __stoppedAt?: number };
      return w.__stoppedAt! - w.__clickAt!;
    });
    console.log(`[web-page] Stop: ${ms.toFixed(0)} ms from the click to the answer marked stopped`);
    await stopped.getByText("Stopped", { exact: true }).waitFor();
    await c.stoppedNotice.filter({ hasText: "Stopped. The answer above is incomplete." }).waitFor();
    await waitForStatus(page, "idle");
    await screenshot(page, "05-stopped");

    const partial = (await stopped.innerText()).replace(/\s*Stopped\s*$/, "").trim();
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length, "the answer was cut").toBeLessThan(HELP.length);
    expect(HELP.startsWith(partial), `"${partial}" is the start of the answer`).toBe(true);
    expect(await c.answers.count()).toBe(1);
    expect((await getThread(server.url, id)).last_outcome).toBe("cancelled");
  });

  it("reload mid-stream: the same thread comes back, the answer continues to its end without repeats, and the run was not cancelled", async () => {
    // A new chat (no hash): the page names the thread in the URL on the first message.
    await openPage(page, server.url);
    expect(threadIdFromUrl(page)).toBeUndefined();
    await sendMessage(page, "what is this?");
    const c = chat(page);
    await c.log.locator('[data-testid="msg-assistant"][data-state="streaming"]').filter({ hasText: /\S+\s+\S+/ }).waitFor();
    const id = threadIdFromUrl(page);
    expect(id, "the thread id is in the URL").toMatch(/^web-[a-z0-9]+$/);

    await page.reload();
    expect(threadIdFromUrl(page)).toBe(id);
    // The answer streams on after the reload (replayed from its first token, then live).
    await c.log.locator('[data-testid="msg-assistant"][data-state="streaming"]').waitFor();
    await screenshot(page, "06-reloaded-streaming");
    await c.log.locator('[data-testid="msg-assistant"][data-state="done"]').waitFor();
    await waitForStatus(page, "idle");
    await screenshot(page, "06-reloaded-done");

    const view = await getThread(server.url, id!);
    expect(view.last_outcome).toBe("completed");
    expect(lastAssistantText(view)).toBe(HELP);
    expect(await c.answers.count(), "one answer, not one per stream").toBe(1);
    expect((await c.lastAnswer.innerText()).trim()).toBe(HELP);
    expect(await c.userMessages.count()).toBe(1);
  });

  it("reload while waiting: the approval card is back after the reload and still works", async () => {
    await openPage(page, server.url);
    const { callId } = await refundWaiting(page);
    const id = threadIdFromUrl(page)!;
    expect(id, "the page names the thread in the URL, so a reload opens it again").toMatch(/^web-[a-z0-9]+$/);

    await page.reload();
    const card = chat(page).approvalCard("refund_order");
    await card.waitFor();
    expect(await callIdOf(card)).toBe(callId);
    await waitForToolStatus(page, callId, "waiting");
    await waitForStatus(page, "waiting_human");
    expect(countdownSeconds(await card.getByTestId("countdown").innerText())).toBeGreaterThan(890);
    await screenshot(page, "07-reloaded-waiting");

    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await waitForToolStatus(page, callId, "ok");
    await chat(page).answers.filter({ hasText: "Done: refunded $5.00 on A-1002." }).waitFor();
    await waitForStatus(page, "idle");
    expect(refundsFor(server, callId)).toHaveLength(1);
    expect((await getThread(server.url, id)).last_outcome).toBe("completed");
  });

  it("countdown to expiry counts on the server's clock: it falls, shows Expired without buttons, and the call ends expired — also with the browser's clock an hour ahead", async () => {
    const skewed = await newPage();
    const SKEW_MS = 60 * 60 * 1000;
    await skewed.addInitScript((skew) => {
      const real = Date.now.bind(Date);
      Date.now = () => real() + skew;
    }, SKEW_MS);

    async function expiryFlow(p: Page, label: string) {
      const id = uniqueThreadId(label);
      await openPage(p, expiryServer.url, id);
      await sendMessage(p, REFUND);
      const card = chat(p).approvalCard("refund_order");
      await card.waitFor();
      const callId = await callIdOf(card);
      const countdown = card.getByTestId("countdown");
      const firstText = await countdown.innerText();
      const first = countdownSeconds(firstText);
      // Roughly the real window (the Date header has 1 s resolution), not an hour off, and
      // never more than is left.
      expect(firstText, `${label}: first countdown`).toMatch(/^Expires in \d+:\d\d$/);
      expect(first!, `${label}: first countdown`).toBeLessThanOrEqual(TTL_S);
      expect(first!, `${label}: first countdown`).toBeGreaterThanOrEqual(TTL_S - 2);
      await screenshot(p, `08-${label}-countdown`);
      // It falls by the second.
      await countdown.filter({ hasText: new RegExp(`^Expires in 0:0[0-${first! - 1}]$`) }).waitFor();
      await card.getByRole("button", { name: "Approve", exact: true }).waitFor(); // still decidable before the deadline

      await countdown.filter({ hasText: /^Expired$/ }).waitFor({ timeout: (TTL_S + 3) * 1000 });
      expect(await card.getAttribute("data-expired")).toBe("true");
      expect(await card.getByRole("button").count(), `${label}: no buttons on an expired card`).toBe(0);
      await screenshot(p, `08-${label}-expired-card`);
      // Nothing streams an expiry: the session reads the thread again after the deadline.
      await waitForToolStatus(p, callId, "expired");
      await waitForStatus(p, "idle");
      expect(await card.count(), "no approval card once the server closed it").toBe(0);
      await screenshot(p, `08-${label}-expired`);
      expect((await getThread(expiryServer.url, id)).last_outcome).toBe("expired");
      expect(refundsFor(expiryServer, callId)).toEqual([]);
    }

    await skewed.goto(`${expiryServer.url}/healthz`);
    const browserAhead = (await skewed.evaluate(() => Date.now())) - Date.now();
    expect(browserAhead, "the skewed page's clock is an hour ahead").toBeGreaterThan(SKEW_MS - 60_000);
    await Promise.all([expiryFlow(page, "true-clock"), expiryFlow(skewed, "skewed-clock")]);
  });

  it("masked values never reach the page: the email's address and body, and the looked-up customer email", async () => {
    const id = uniqueThreadId("masked");
    await openPage(page, server.url, id);
    await sendMessage(page, EMAIL);
    const c = chat(page);
    const card = c.approvalCard("send_email");
    await card.waitFor();
    const callId = await callIdOf(card);
    await waitForStatus(page, "waiting_human");
    const lookup = c.toolCardsNamed("lookup_order").and(c.log.locator('[data-status="ok"]'));
    await lookup.waitFor();

    // The masked fields show as *** (card and tool card); the lookup's output masks the address.
    await expect.poll(() => card.locator("dl.args").innerText()).toMatch(/to\s*\*\*\*[\s\S]*body\s*\*\*\*/);
    expect(await card.getByText("Needs the thread's owner", { exact: true }).isVisible()).toBe(true);
    expect(await lookup.locator("pre.output").innerText()).toContain('"customer_email":"***"');
    // The edit form does not fill a masked field in.
    await card.getByRole("button", { name: "Edit", exact: true }).click();
    const to = card.getByLabel("to", { exact: true });
    expect(await to.inputValue()).toBe("");
    expect(await to.getAttribute("placeholder")).toBe("unchanged (masked)");
    await screenshot(page, "09-masked-waiting");
    await expectNoSecrets("while the card waits (edit form open)");
    await card.getByRole("button", { name: "Cancel edit", exact: true }).click();

    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await waitForToolStatus(page, callId, "ok");
    await c.answers.filter({ hasText: "Sent: the email to the customer of A-1003 is in the outbox." }).waitFor();
    await waitForStatus(page, "idle");
    await screenshot(page, "09-masked-sent");
    await expectNoSecrets("after the email was sent");
    await page.reload();
    await waitForToolStatus(page, callId, "ok");
    await expectNoSecrets("after a reload (history from GET /threads/:id)");

    // The values exist: the email went out with them, so their absence above means something.
    const db = openDb(server.dataDir);
    try {
      expect(db.rows("outbox", "call_id = ?", callId)).toEqual([expect.objectContaining({ to: SECRET_TO, body: SECRET_BODY })]);
    } finally {
      db.close();
    }

    async function expectNoSecrets(when: string) {
      const html = (await page.content()).toLowerCase();
      const inputs = await page.evaluate(() => Array.from(document.querySelectorAll("input, textarea"), (el) => (el as HTMLInputElement).value).join("\n"));
      const title = await page.title();
      for (const secret of [SECRET_TO, SECRET_BODY, "alan@"]) {
        expect.soft(html.includes(secret.toLowerCase()), `${when}: "${secret}" in the DOM`).toBe(false);
        expect.soft(inputs.toLowerCase().includes(secret.toLowerCase()), `${when}: "${secret}" in a field`).toBe(false);
        expect.soft(title.includes(secret), `${when}: "${secret}" in the title`).toBe(false);
      }
    }
  });

  it("four eyes: the owner sees who must decide and cannot; an approver finds it in the inbox and approves; the owner's page shows the result by itself", async () => {
    const id = uniqueThreadId("four-eyes");
    // The owner signs in with a token on the page's form.
    await page.goto(`${authServer.url}/#thread=${id}`);
    await page.getByLabel("Bearer token", { exact: true }).fill(OWNER_TOKEN);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("whoami").filter({ hasText: "olivia" }).waitFor();
    await waitForStatus(page, "idle");
    expect(await page.getByRole("region", { name: "Approvals inbox" }).count(), "no inbox for a plain user").toBe(0);
    await sendMessage(page, REFUND);
    const ownerCard = chat(page).approvalCard("refund_order");
    await ownerCard.waitFor();
    const callId = await callIdOf(ownerCard);
    await ownerCard.getByTestId("waiting-for").filter({ hasText: /^Waiting for an approver$/ }).waitFor();
    await waitForStatus(page, "waiting_human");
    expect(await ownerCard.getByRole("button").count(), "the owner has no buttons").toBe(0);
    await screenshot(page, "10-owner-waiting-for-approver");

    // The approver, in another browser profile, finds it in the inbox.
    const approver = await newPage();
    await approver.goto(`${authServer.url}/`);
    await approver.getByLabel("Bearer token", { exact: true }).fill(APPROVER_TOKEN);
    await approver.getByRole("button", { name: "Sign in", exact: true }).click();
    await approver.getByTestId("whoami").filter({ hasText: "arthur" }).waitFor();
    const inbox = approver.getByRole("region", { name: "Approvals inbox" });
    const item = inbox.locator(`[data-testid="inbox-item"][data-thread-id="${id}"]`);
    await item.filter({ hasText: "refund_order" }).waitFor();
    await screenshot(approver, "10-approver-inbox");
    await item.click();
    expect(threadIdFromUrl(approver)).toBe(id);
    // Someone else's thread: the approver may decide, not write in it or stop it.
    await approver.getByTestId("read-only").filter({ hasText: "olivia's thread" }).waitFor();
    expect(await chat(approver).message.count(), "no Message box on another's thread").toBe(0);
    const card = chat(approver).approvalCard("refund_order");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await waitForToolStatus(approver, callId, "ok");
    await chat(approver).answers.filter({ hasText: "Done: refunded $5.00 on A-1002." }).waitFor();
    await screenshot(approver, "10-approver-approved");
    await item.waitFor({ state: "detached" }); // the inbox is read again when the run ends

    // The owner's page watches the waiting thread: the result and the answer arrive by themselves.
    await waitForToolStatus(page, callId, "ok");
    await chat(page).answers.filter({ hasText: "Done: refunded $5.00 on A-1002." }).waitFor();
    await waitForStatus(page, "idle");
    expect(await ownerCard.count()).toBe(0);
    await screenshot(page, "10-owner-sees-result");
    // And a reload shows the same, still signed in (sessionStorage).
    await page.reload();
    await page.getByTestId("whoami").filter({ hasText: "olivia" }).waitFor();
    await waitForToolStatus(page, callId, "ok");
    await chat(page).answers.filter({ hasText: "Done: refunded $5.00 on A-1002." }).waitFor();
    expect(await chat(page).answers.filter({ hasText: "Done: refunded" }).count(), "the answer shows once").toBe(1);
    expect(refundsFor(authServer, callId)).toHaveLength(1);
    expect((await getThread(authServer.url, id, OWNER_TOKEN)).last_outcome).toBe("completed");
  });

  it("a message the server refuses comes back to the box, and the run that was in the way shows to its end", async () => {
    const id = uniqueThreadId("refused");
    await openPage(page, server.url, id);
    // Another client starts a long answer on this thread; the page, idle, does not know yet.
    const other = await fetch(`${server.url}/threads/${id}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: "hello from elsewhere", on_disconnect: "continue" }),
    });
    expect(other.status).toBe(200);
    const reading = other.text(); // read it to the end, so the connection closes cleanly
    await sendMessage(page, "my message");
    const c = chat(page);
    await c.requestError.filter({ hasText: "thread_busy" }).waitFor();
    expect(await c.message.inputValue(), "the typed text is back").toBe("my message");
    // The page follows the run that was in the way, with its message, to the end.
    await c.userMessages.filter({ hasText: "hello from elsewhere" }).waitFor();
    await c.answers.and(page.locator('[data-state="done"]')).filter({ hasText: "I'm the tollgate demo agent" }).waitFor();
    await waitForStatus(page, "idle");
    expect(await c.userMessages.allInnerTexts()).toEqual(["hello from elsewhere"]);
    await reading;
  });

  it("a mangled or invalid thread link opens a new chat instead of a blank page", async () => {
    for (const hash of ["#thread=%E0%A4%A", "#thread=has%20space", `#thread=${"x".repeat(129)}`]) {
      await page.goto(`${server.url}/${hash}`);
      await waitForStatus(page, "idle");
      expect(await chat(page).message.isEditable(), hash).toBe(true);
    }
  });

  it("with auth on, the first answer of a new chat can be stopped: the page's own new thread is the writer's", async () => {
    const id = uniqueThreadId("auth-stop");
    await page.goto(`${authServer.url}/#thread=${id}`);
    await page.getByLabel("Bearer token", { exact: true }).fill(OWNER_TOKEN);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await waitForStatus(page, "idle");
    await sendMessage(page, "hello, what can you do?");
    const c = chat(page);
    await c.stopButton.click();
    // Pressed at once, maybe before the first word: the run ends stopped, with whatever had come.
    await c.stoppedNotice.waitFor();
    expect(await c.answers.and(page.locator(':not([data-state="stopped"])')).count()).toBe(0);
    expect((await getThread(authServer.url, id, OWNER_TOKEN)).last_outcome).toBe("cancelled");
  });

  it("withdraw: the owner cancels a request nobody decided; the call ends cancelled and nothing runs", async () => {
    const id = uniqueThreadId("withdraw");
    await page.goto(`${authServer.url}/#thread=${id}`);
    await page.getByLabel("Bearer token", { exact: true }).fill(OWNER_TOKEN);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await waitForStatus(page, "idle");
    await sendMessage(page, REFUND);
    const ownerCard = chat(page).approvalCard("refund_order");
    await ownerCard.waitFor();
    const callId = await callIdOf(ownerCard);
    await page.getByRole("button", { name: "Withdraw request", exact: true }).click();
    await waitForToolStatus(page, callId, "cancelled");
    await waitForStatus(page, "idle");
    expect(await ownerCard.count()).toBe(0);
    await screenshot(page, "12-withdrawn");
    expect(refundsFor(authServer, callId)).toHaveLength(0);
    expect((await getThread(authServer.url, id, OWNER_TOKEN)).last_outcome).toBe("cancelled");
  });

  it("keyboard only on a 375 px screen: Tab to the Message box, Enter sends, Tab to Approve, Enter approves; nothing scrolls sideways", async () => {
    const phone = await newPage({ viewport: { width: 375, height: 740 } });
    const id = uniqueThreadId("keyboard");
    await openPage(phone, server.url, id);
    const c = chat(phone);
    const noSideScroll = async (when: string) =>
      expect(await phone.evaluate(() => document.documentElement.scrollWidth), `${when}: page width`).toBeLessThanOrEqual(375);
    await noSideScroll("empty chat");

    await tabTo(phone, c.message);
    await phone.keyboard.type(REFUND);
    await phone.keyboard.press("Enter");
    await c.userMessages.filter({ hasText: REFUND }).waitFor();
    const card = c.approvalCard("refund_order");
    await card.waitFor();
    await waitForStatus(phone, "waiting_human");
    const callId = await callIdOf(card);
    await noSideScroll("approval card");
    await screenshot(phone, "11-phone-approval-waiting");

    const approve = card.getByRole("button", { name: "Approve", exact: true });
    await tabTo(phone, approve, { shift: true });
    await phone.keyboard.press("Enter");
    await waitForToolStatus(phone, callId, "ok");
    await c.answers.filter({ hasText: "Done: refunded $5.00 on A-1002." }).waitFor();
    await waitForStatus(phone, "idle");
    await noSideScroll("finished flow");
    await screenshot(phone, "11-phone-done");
    expect(refundsFor(server, callId)).toHaveLength(1);
  });

  it("nothing overlaps on a 375 px screen: the thread header clears every row of the thread list, and no two controls collide, with a new chat and with a waiting thread open; tapping a row brings the chat into view", async () => {
    const phone = await newPage({ viewport: { width: 375, height: 740 } });
    // More threads than fit on the first screen beside the inbox, so the list runs past it.
    const listed = Array.from({ length: 8 }, () => uniqueThreadId("narrow-list"));
    const created = await Promise.all(
      listed.map((thread_id) =>
        fetch(`${server.url}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ thread_id }) }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(listed.map(() => 201));
    const rows = phone.locator(THREAD_ROWS);
    const expectNothingOverlaps = async (when: string) => {
      const {
        parts: [header, chatArea, rowBoxes],
        controls,
      } = await layoutSnapshot(phone, [
        { css: '[data-testid="thread-header"]', name: "thread header" },
        { css: 'main[aria-label="Chat"]', name: "chat" },
        { css: THREAD_ROWS, name: "thread row" },
      ]);
      expect(rowBoxes!.length, `${when}: rows in the thread list`).toBeGreaterThanOrEqual(listed.length);
      // Soft, so one failure lists every collision. The whole chat too: rows further down the
      // list would lie under its conversation, not its header.
      expect.soft(overlapsBetween(header!, rowBoxes!), `${when}: the thread header over the thread list`).toEqual([]);
      expect.soft(overlapsBetween(chatArea!, rowBoxes!), `${when}: the chat over the thread list`).toEqual([]);
      expect.soft(overlapsWithin(controls), `${when}: controls on top of each other`).toEqual([]);
    };

    await openPage(phone, server.url);
    for (const id of listed) await rows.and(phone.locator(`[data-thread-id="${id}"]`)).waitFor();
    await expectNothingOverlaps("a new chat");
    await screenshot(phone, "13-phone-thread-list");

    const id = uniqueThreadId("narrow-open");
    await refundWaiting(phone, id);
    await rows.and(phone.locator(`[data-thread-id="${id}"][aria-current="page"]`)).waitFor();
    await expectNothingOverlaps("a waiting thread open");
    await screenshot(phone, "13-phone-thread-open");

    // The chat lies below the list: tapping a row brings the whole chat into view, header to Message box.
    await phone.evaluate(() => window.scrollTo(0, 0));
    const picked = listed[0]!;
    await rows.and(phone.locator(`[data-thread-id="${picked}"]`)).click();
    await chat(phone).main.locator('[data-testid="thread-header"]').filter({ hasText: picked }).waitFor();
    // (+ 0 turns a rounded -0 into 0, which toEqual tells apart.)
    await expect
      .poll(() => chat(phone).main.evaluate((el) => [el.getBoundingClientRect().top, el.getBoundingClientRect().bottom].map((n) => Math.round(n) + 0)), {
        message: "the chat's top and bottom, on a 740 px high screen",
      })
      .toEqual([0, 740]);
    await screenshot(phone, "13-phone-picked-thread");
  });
});
