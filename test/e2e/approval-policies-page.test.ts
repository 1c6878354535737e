/**
 * Approval policies on the web page, in a real browser against the real server and its demo
 * model (AUTH_ROLES=finance): a $600 refund waits for two finance approvers, approved from two
 * browser profiles with two tokens; an escalation webhook arrives and the inbox marks the request
 * escalated; and a refund whose order had another refund land since its approver looked is
 * stopped as stale. Screenshots of each state go to test-output/screenshots/ (docs/guides/approval-policies.md
 * shows copies from docs/screenshots/).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { assertBrowserAvailable, browserAvailable, launchChromium, skipBrowserSuite } from "../helpers/browser.js";
import { browserProfiles } from "../helpers/browser-profiles.js";
import { callIdOf, chat, screenshot, sendMessage, uniqueThreadId, waitForStatus, waitForToolStatus } from "../helpers/page-driver.js";
import { startServer, type ServerProcess } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const avail = browserAvailable();
const skip = skipBrowserSuite("approval-policies-page", avail);

const OWNER = "owner-token-olivia-1";
const ARTHUR = "approver-token-arthur-1";
const FIN1 = "finance-token-fin1-01";
const FIN2 = "finance-token-fin2-01";

describe.skipIf(skip)("approval policies on the web page", () => {
  let browser: Browser;
  let server: ServerProcess;
  let receiver: WebhookReceiver;
  let page: Page;
  /** Another person: a browser profile of their own. */
  const { newPage } = browserProfiles(() => browser);

  /** Opens the page (on a thread, or a new chat) and signs in with `token`. */
  async function signIn(p: Page, token: string, sub: string, threadId?: string): Promise<void> {
    await p.goto(`${server.url}/${threadId ? `#thread=${threadId}` : ""}`);
    await p.getByLabel("Bearer token", { exact: true }).fill(token);
    await p.getByRole("button", { name: "Sign in", exact: true }).click();
    await p.getByTestId("whoami").filter({ hasText: sub }).waitFor();
  }

  function refundsFor(callId: string) {
    const db = openDb(server.dataDir);
    try {
      return db.rows("refunds", "call_id = ?", callId);
    } finally {
      db.close();
    }
  }

  beforeAll(async () => {
    assertBrowserAvailable(avail);
    receiver = await startWebhookReceiver();
    [browser, server] = await Promise.all([
      launchChromium(),
      startServer({
        DEMO_TOKEN_DELAY_MS: "5",
        AUTH_ROLES: "finance",
        AUTH_TOKENS: JSON.stringify({
          [OWNER]: { sub: "olivia", roles: ["user"] },
          [ARTHUR]: { sub: "arthur", roles: ["approver"] },
          [FIN1]: { sub: "fin1", roles: ["finance"] },
          [FIN2]: { sub: "fin2", roles: ["finance"] },
        }),
        APPROVAL_WEBHOOK_URL: receiver.url,
        APPROVAL_WEBHOOK_SECRET: "whsec-test-0123456789abcdef",
        WEBHOOK_SWEEP_MS: "50",
        // Every refund escalates after 2 s (the demo's email keeps its own 5 minutes).
        APPROVAL_ESCALATE_SECONDS: "2",
        EXPIRY_SWEEP_MS: "100",
      }),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.kill();
    await receiver?.close();
  });

  beforeEach(async () => {
    page = await newPage();
  });

  it("a $600 refund waits for two of finance: each approves from their own browser with their own token, and it runs once", async () => {
    const id = uniqueThreadId("quorum-page");
    await signIn(page, OWNER, "olivia", id);
    await sendMessage(page, "refund order A-1003 600 dollars");
    const ownerCard = chat(page).approvalCard("refund_order");
    await ownerCard.waitFor();
    const callId = await callIdOf(ownerCard);
    await ownerCard.getByTestId("policy").filter({ hasText: /^Needs 2 of finance$/ }).waitFor();
    await ownerCard.getByTestId("preview").filter({ hasText: "refunded_cents" }).waitFor();
    await ownerCard.getByTestId("waiting-for").filter({ hasText: /^Waiting for 2 of finance$/ }).waitFor();
    expect(await ownerCard.getByRole("button").count(), "the owner never counts").toBe(0);
    await screenshot(page, "30-quorum-owner-waiting");

    const fin1 = await newPage();
    await signIn(fin1, FIN1, "fin1");
    await fin1.locator(`[data-testid="inbox-item"][data-thread-id="${id}"]`).click();
    const card1 = chat(fin1).approvalCard("refund_order");
    await card1.getByRole("button", { name: "Approve", exact: true }).click();
    // Counted, and the card stays open for the next person.
    await card1.getByTestId("policy").filter({ hasText: /^Needs 2 of finance — approved by fin1$/ }).waitFor();
    await card1.getByTestId("waiting-for").filter({ hasText: /^Waiting for 1 more of finance$/ }).waitFor();
    expect(await card1.getByRole("button", { name: "Approve", exact: true }).count(), "one person counts once").toBe(0);
    await waitForStatus(fin1, "waiting_human");
    expect(refundsFor(callId)).toEqual([]);
    await screenshot(fin1, "31-quorum-first-approval");

    const fin2 = await newPage();
    await signIn(fin2, FIN2, "fin2", id);
    const card2 = chat(fin2).approvalCard("refund_order");
    await card2.getByTestId("policy").filter({ hasText: /approved by fin1$/ }).waitFor();
    await card2.getByRole("button", { name: "Approve", exact: true }).click();
    await waitForToolStatus(fin2, callId, "ok");
    await chat(fin2).answers.filter({ hasText: "Done: refunded $600.00 on A-1003." }).waitFor();
    await screenshot(fin2, "32-quorum-second-approval-ran");
    // The owner's page shows the result by itself.
    await waitForToolStatus(page, callId, "ok");
    expect(refundsFor(callId)).toHaveLength(1);
  });

  it("the second of finance presses Approve while the page's replay of the thread is still reading: the approval is sent once it is in, and the refund runs", async () => {
    // The owner asks and fin1 approves through the API; only fin2's page is under test.
    const id = uniqueThreadId("quorum-replay");
    await new TollgateClient({ baseUrl: server.url, token: OWNER }).run(id, "refund order A-1004 600 dollars", { on_disconnect: "continue" }).collect();
    const fin1 = new TollgateClient({ baseUrl: server.url, token: FIN1 });
    const { pending } = await fin1.getThread(id);
    const callId = pending!.calls[0]!.call_id;
    expect(await fin1.resumeDetached(id, pending!.interrupt_id, { decisions: [{ call_id: callId, approved: true }] })).toMatchObject({ run_id: null });

    // fin2's page shows the card from the thread's view, then replays the thread's latest run:
    // that replay (its first GET …/stream) is held until Approve has been pressed.
    const fin2 = await newPage();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let replaying!: () => void;
    const replayAsked = new Promise<void>((r) => (replaying = r));
    let streams = 0;
    await fin2.route(/\/threads\/[^/]+\/stream$/, async (route) => {
      if (++streams === 1) {
        replaying();
        await held;
      }
      await route.continue();
    });
    await signIn(fin2, FIN2, "fin2", id);
    const card = chat(fin2).approvalCard("refund_order");
    await card.getByTestId("policy").filter({ hasText: /approved by fin1$/ }).waitFor();
    await replayAsked;
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    release();
    await waitForToolStatus(fin2, callId, "ok");
    await chat(fin2).answers.filter({ hasText: "Done: refunded $600.00 on A-1004." }).waitFor();
    await waitForStatus(fin2, "idle");
    expect(refundsFor(callId)).toHaveLength(1);
  });

  it("a request still waiting at its escalation time: the webhook arrives with what it waits on, and the inbox marks it escalated", async () => {
    const id = uniqueThreadId("escalate-page");
    await signIn(page, OWNER, "olivia", id);
    await sendMessage(page, "refund order A-1002 5 dollars");
    const callId = await callIdOf(chat(page).approvalCard("refund_order"));
    const hook = await receiver.waitFor(
      () => receiver.delivered().find((w) => w.body?.thread_id === id && w.body.type === "approval.escalated"),
      15_000,
      "an approval.escalated webhook",
    );
    expect(hook.body).toMatchObject({ waiting_on: [callId], requested_by: "olivia", calls: [{ name: "refund_order", policy: "approver" }] });
    const arthur = await newPage();
    await signIn(arthur, ARTHUR, "arthur");
    const item = arthur.locator(`[data-testid="inbox-item"][data-thread-id="${id}"]`);
    await item.getByTestId("escalated").waitFor();
    await item.click();
    await chat(arthur).approvalCard("refund_order").getByTestId("card-escalated").waitFor();
    await screenshot(arthur, "33-escalated-in-inbox");
  });

  it("a stale preview stops a refund: another refund of the order lands after the approver looked, and this one does not run", async () => {
    const first = uniqueThreadId("stale-a");
    const second = uniqueThreadId("stale-b");
    await signIn(page, OWNER, "olivia", first);
    await sendMessage(page, "refund order A-1005 5 dollars");
    const staleCall = await callIdOf(chat(page).approvalCard("refund_order"));
    const other = await newPage();
    await signIn(other, OWNER, "olivia", second);
    await sendMessage(other, "refund order A-1005 3 dollars");
    const otherCall = await callIdOf(chat(other).approvalCard("refund_order"));

    const arthur = await newPage();
    await signIn(arthur, ARTHUR, "arthur", first);
    const card = chat(arthur).approvalCard("refund_order");
    await card.getByTestId("preview").filter({ hasText: "refunded_cents" }).waitFor();
    const seen = await card.getByTestId("preview").innerText();
    await screenshot(arthur, "34-stale-preview-before");
    // Meanwhile the other refund of the same order is approved and lands.
    const arthur2 = await newPage();
    await signIn(arthur2, ARTHUR, "arthur", second);
    await chat(arthur2).approvalCard("refund_order").getByRole("button", { name: "Approve", exact: true }).click();
    await waitForToolStatus(arthur2, otherCall, "ok");

    await card.getByRole("button", { name: "Approve", exact: true }).click();
    const stale = await waitForToolStatus(arthur, staleCall, "error");
    await stale.filter({ hasText: "stale_preview" }).waitFor();
    expect(seen).toContain("refunded_cents");
    expect(refundsFor(staleCall)).toEqual([]);
    expect(refundsFor(otherCall)).toHaveLength(1);
    await waitForStatus(arthur, "idle");
    await screenshot(arthur, "35-stale-preview-stopped");
  });
});
