/**
 * LangChain's two `useStream` hooks in Debian's Chromium, against tollgate's `/langgraph`: the
 * run-centric one from `@langchain/langgraph-sdk/react` (test/fixtures/use-stream-page, resuming
 * through `submit(undefined, { command: { resume } })`) and the thread-centric one from
 * `@langchain/react` (test/fixtures/react-stream-page, answering through `respond`). Each page is
 * bundled here with esbuild and served from an origin of its own, listed in CORS_ORIGINS, as a
 * team's frontend would be. Tokens stream into the page, the approval appears from the hook's
 * `interrupt`, approving from the page runs the refund once (an edit with the edited amount), rejecting never runs it, stopping cancels the run and the model's request, and each message
 * shows once. A message replaced from the page (each hook's branching) runs from the checkpoint
 * before it. Signed in, two of finance approve a quorum refund from their own pages.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBrowserAvailable, browserAvailable, launchChromium, skipBrowserSuite } from "../helpers/browser.js";
import { REPO_ROOT } from "../helpers/server-process.js";
import { within } from "../helpers/within.js";
import { call, expectNoStackTraces, type Stack, startStack } from "./support.js";

const avail = browserAvailable();
const skip = skipBrowserSuite("langgraph-use-stream", avail);

let s: Stack;
let page: http.Server;
let origin: string;
let browser: Browser;

/** The page and its bundle, from a server of their own: the page's origin is not tollgate's. */
async function servePage(fixture: string): Promise<http.Server> {
  const bundle = await build({
    entryPoints: [path.join(REPO_ROOT, `test/fixtures/${fixture}/app.tsx`)],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  const js = bundle.outputFiles[0]!.text;
  const html = '<!doctype html><html><body><div id="root"></div><script src="/app.js"></script></body></html>';
  const server = http.createServer((req, res) => {
    const isJs = req.url === "/app.js";
    res.writeHead(200, { "Content-Type": isJs ? "text/javascript" : "text/html" });
    res.end(isJs ? js : html);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

/** The hooks, each with the page a team would write with it. */
const HOOKS = [
  { hook: "@langchain/langgraph-sdk/react", fixture: "use-stream-page", shot: "use-stream-approved.png" },
  { hook: "@langchain/react", fixture: "react-stream-page", shot: "react-stream-approved.png" },
];

describe.skipIf(skip).each(HOOKS)("useStream of $hook in Chromium against /langgraph", ({ fixture, shot }) => {
  /** A new page with `message` sent from it, the model's answer to it queued first. */
  async function sent(message: string, answer: Parameters<Stack["model"]["push"]>[0]): Promise<Page> {
    const tab = await (await browser.newContext()).newPage();
    s.model.push(answer);
    await tab.goto(`${origin}/?api=${encodeURIComponent(`${s.server.url}/langgraph`)}`);
    await tab.getByLabel("Message").fill(message);
    await tab.getByRole("button", { name: "Send" }).click();
    return tab;
  }

  beforeAll(async () => {
    assertBrowserAvailable(avail);
    page = await servePage(fixture);
    origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    // Slow tokens, so the page can be seen mid-answer.
    [s, browser] = await Promise.all([startStack({ CORS_ORIGINS: origin }, { delayMs: 40 }), launchChromium()]);
  }, 60_000);
  afterAll(async () => {
    expectNoStackTraces(s.server);
    await browser?.close();
    await s?.stop();
    await new Promise((r) => page?.close(r));
  });

  it("streams tokens, shows the approval, and approving from the hook runs the refund once", async () => {
    const answer = "Let me look at order A-1001 and refund it for you right away.";
    const tab = await sent("refund my order", { text: answer, toolCalls: [{ id: "us-r1", name: "refund_order", args: { order_id: "A-1001", amount_cents: 700, reason: "late" } }] });

    // Mid-answer: part of the text is on the page before the whole of it.
    const ai = tab.getByTestId("message-ai").first();
    await tab.waitForFunction(
      (full) => {
        const t = document.querySelector('[data-testid="message-ai"]')?.textContent ?? "";
        return t.length > 0 && t.length < full.length && full.startsWith(t);
      },
      answer,
      { timeout: 10_000 },
    );
    await expect.poll(() => ai.textContent(), { timeout: 10_000, message: "the streamed answer did not complete" }).toBe(answer);

    const approval = tab.getByTestId("approval");
    await approval.waitFor({ timeout: 10_000 });
    expect(await tab.getByTestId("action").textContent()).toContain("refund_order");
    expect(s.db.rows("refunds", "call_id = ?", "us-r1")).toHaveLength(0);

    s.model.push({ text: "Refunded $7.00." });
    await tab.getByRole("button", { name: "Approve", exact: true }).click();
    await expect.poll(() => tab.getByTestId("message-ai").last().textContent(), { timeout: 10_000, message: "the answer after the approval did not appear" }).toBe("Refunded $7.00.");
    await approval.waitFor({ state: "detached", timeout: 10_000 });
    expect(await tab.getByTestId("message-tool").textContent()).toContain("A-1001");
    expect(s.db.rows("refunds", "call_id = ?", "us-r1")).toHaveLength(1);
    // Each message once: what streamed and the state sent after it name each message alike.
    expect(await tab.getByTestId("message-human").allTextContents()).toEqual(["refund my order"]);
    expect(await tab.getByTestId("message-ai").count()).toBe(2);
    expect(await tab.getByTestId("error").count()).toBe(0);
    await expect.poll(() => tab.getByTestId("loading").textContent(), { timeout: 10_000, message: "the hook did not see the stream end" }).toBe("idle");
    await tab.screenshot({ path: path.join(REPO_ROOT, `test-output/screenshots/${shot}`) });
  });

  it("an edit from the hook runs the refund once, with the edited amount", async () => {
    const tab = await sent("refund A-1003", { text: "Refunding.", toolCalls: [{ id: "us-e1", name: "refund_order", args: { order_id: "A-1003", amount_cents: 900, reason: "late" } }] });
    const approval = tab.getByTestId("approval");
    await approval.waitFor({ timeout: 10_000 });
    s.model.push({ text: "Refunded $3.00." });
    await tab.getByRole("button", { name: "Approve $3" }).click();
    await expect.poll(() => tab.getByTestId("message-ai").last().textContent(), { timeout: 10_000, message: "the answer after the edit did not appear" }).toBe("Refunded $3.00.");
    expect(await tab.getByTestId("message-tool").textContent()).toContain("amount_cents");
    expect(s.db.rows("refunds", "call_id = ?", "us-e1")).toMatchObject([{ amount_cents: 300 }]);
    expect(await tab.getByTestId("error").count()).toBe(0);
  });

  it("stopping from the hook cancels the run on the server, the model's request with it", async () => {
    const tab = await sent("take your time", { hang: true, text: "Working on it" });
    await expect.poll(async () => (await tab.getByTestId("message-ai").last().textContent())?.startsWith("Working"), { timeout: 10_000, message: "the first tokens did not appear" }).toBe(true);
    const request = s.model.requests.at(-1)!;
    await tab.getByRole("button", { name: "Stop" }).click();
    await within(request.closed, { ms: 10_000, failure: "the model's HTTP request was not cancelled by the hook's stop()" });
    const threadId = (await tab.getByTestId("thread").textContent())!;
    await expect.poll(() => s.db.rows("threads", "thread_id = ?", threadId)[0]?.last_outcome, { timeout: 10_000, message: "the thread was not recorded as cancelled" }).toBe("cancelled");
    await expect.poll(() => tab.getByTestId("loading").textContent(), { timeout: 10_000, message: "the hook did not see the run end" }).toBe("idle");
  });

  it("rejecting from the hook never runs the refund, and the model reads the person's reason", async () => {
    const tab = await sent("refund the other one", { text: "Refunding.", toolCalls: [{ id: "us-x1", name: "refund_order", args: { order_id: "A-1002", amount_cents: 300, reason: "late" } }] });
    const approval = tab.getByTestId("approval");
    await approval.waitFor({ timeout: 10_000 });
    s.model.push({ text: "Understood, no refund." });
    await tab.getByRole("button", { name: "Reject" }).click();
    await expect.poll(() => tab.getByTestId("message-ai").last().textContent(), { timeout: 10_000, message: "the answer after the rejection did not appear" }).toBe("Understood, no refund.");
    await approval.waitFor({ state: "detached", timeout: 10_000 });
    expect(await tab.getByTestId("message-tool").textContent()).toBe("Rejected: not this one");
    expect(s.db.rows("refunds", "call_id = ?", "us-x1")).toHaveLength(0);
    expect(await tab.getByTestId("error").count()).toBe(0);
  });

  it("a message replaced from the hook runs from the checkpoint before it: the old exchange is gone from the page and the thread", async () => {
    const tab = await sent("first question", { text: "First answer." });
    const ai = () => tab.getByTestId("message-ai").allTextContents();
    await expect.poll(ai, { timeout: 10_000, message: "the first answer did not appear" }).toEqual(["First answer."]);
    await expect.poll(() => tab.getByTestId("loading").textContent(), { timeout: 10_000, message: "the first run did not end" }).toBe("idle");
    s.model.push({ text: "Second answer." });
    await tab.getByLabel("Message").fill("second question");
    await tab.getByRole("button", { name: "Send" }).click();
    await expect.poll(ai, { timeout: 10_000, message: "the second answer did not appear" }).toEqual(["First answer.", "Second answer."]);
    await expect.poll(() => tab.getByTestId("loading").textContent(), { timeout: 10_000, message: "the second run did not end" }).toBe("idle");

    // The hook knows the checkpoint before the second question only from what the server sent.
    s.model.push({ text: "Another answer." });
    await tab.getByLabel("Message").fill("another question");
    await tab.getByRole("button", { name: "Replace second question" }).click({ timeout: 10_000 });
    await expect.poll(ai, { timeout: 10_000, message: "the page did not show the forked exchange in place of the second" }).toEqual(["First answer.", "Another answer."]);
    expect(await tab.getByTestId("message-human").allTextContents()).toEqual(["first question", "another question"]);
    const threadId = (await tab.getByTestId("thread").textContent())!;
    const view = await call(s.server.url, "GET", `/threads/${threadId}`);
    expect((view.json.messages as Array<{ content: string }>).map((m) => m.content)).toEqual(["first question", "First answer.", "another question", "Another answer."]);
    expect(await tab.getByTestId("error").count()).toBe(0);
  });
});

const FINANCE = [
  ["tok-fin-000001", { sub: "fin1", roles: ["finance"] }],
  ["tok-fin-000002", { sub: "fin2", roles: ["finance"] }],
] as const;
const SIGNED_IN = { AUTH_TOKENS: JSON.stringify({ "tok-alice-0001": { sub: "alice", roles: ["user"] }, ...Object.fromEntries(FINANCE) }), AUTH_ROLES: "finance" };

describe.skipIf(skip).each(HOOKS)("useStream of $hook, signed in, against a quorum", ({ hook, fixture }) => {
  let signed: Stack;
  let pageServer: http.Server;
  let pageOrigin: string;
  let chromium: Browser;
  beforeAll(async () => {
    assertBrowserAvailable(avail);
    pageServer = await servePage(fixture);
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    [signed, chromium] = await Promise.all([startStack({ ...SIGNED_IN, CORS_ORIGINS: pageOrigin }), launchChromium()]);
  }, 60_000);
  afterAll(async () => {
    expectNoStackTraces(signed.server);
    await chromium?.close();
    await signed?.stop();
    await new Promise((r) => pageServer?.close(r));
  });

  /** The page as `token`'s person sees it, on `thread` if given. */
  async function pageOf(token: string, thread?: string): Promise<Page> {
    const tab = await (await chromium.newContext()).newPage();
    const query = new URLSearchParams({ api: `${signed.server.url}/langgraph`, token, ...(thread ? { thread } : {}) });
    await tab.goto(`${pageOrigin}/?${query}`);
    return tab;
  }

  it("two of finance approve from their own pages: the first leaves it waiting, the second runs the refund once", async () => {
    signed.model.push({ text: "This one needs finance.", toolCalls: [{ id: "us-q1", name: "refund_order", args: { order_id: "A-1003", amount_cents: 60_000, reason: "damaged" } }] });
    const alice = await pageOf("tok-alice-0001");
    await alice.getByLabel("Message").fill("refund the broken one");
    await alice.getByRole("button", { name: "Send" }).click();
    await alice.getByTestId("approval").waitFor({ timeout: 10_000 });
    const threadId = (await alice.getByTestId("thread").textContent())!;
    const approvalsOf = async () => {
      const view = await call(signed.server.url, "GET", `/threads/${threadId}`, undefined, { authorization: "Bearer tok-alice-0001" });
      return (view.json.pending?.calls?.[0]?.approvals ?? []).map((a: { by: string }) => a.by);
    };

    const fin1 = await pageOf(FINANCE[0][0], threadId);
    await fin1.getByTestId("approval").waitFor({ timeout: 10_000 });
    await fin1.getByRole("button", { name: "Approve", exact: true }).click();
    await expect.poll(approvalsOf, { timeout: 10_000, message: "fin1's approval was not recorded" }).toEqual(["fin1"]);
    expect(signed.db.rows("refunds", "call_id = ?", "us-q1")).toHaveLength(0);
    // The run-centric hook gets the contract's 202 waiting_human JSON for a partial decision, which
    // it reports as an error (documented in the frontends guide); the thread-centric one does not.
    if (hook === "@langchain/react") expect(await fin1.getByTestId("error").allTextContents()).toEqual([]);

    signed.model.push({ text: "Refunded after two approvals." });
    const fin2 = await pageOf(FINANCE[1][0], threadId);
    await fin2.getByTestId("approval").waitFor({ timeout: 10_000 });
    await fin2.getByRole("button", { name: "Approve", exact: true }).click();
    await expect.poll(() => fin2.getByTestId("message-ai").last().textContent(), { timeout: 10_000, message: "the answer after the second approval did not reach fin2's page" }).toBe("Refunded after two approvals.");
    expect(signed.db.rows("refunds", "call_id = ?", "us-q1")).toHaveLength(1);
    expect(await fin2.getByTestId("error").count()).toBe(0);
  });
});
