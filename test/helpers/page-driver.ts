/**
 * Driving the web page (src/web, served at GET /) in a real browser, by what a person sees: the
 * accessible names and test hooks of its UI contract. Used by test/e2e/web-page.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import type { Locator, Page } from "playwright-core";
import { REPO_ROOT } from "./server-process.js";

export const SCREENSHOT_DIR = path.join(REPO_ROOT, "test-output/screenshots");

/** Saves the page as test-output/screenshots/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A thread id of this test run's own: `[A-Za-z0-9_-]`, unique per call. */
let counter = 0;
export function uniqueThreadId(label: string): string {
  return `e2e-${label}-${Date.now().toString(36)}-${(++counter).toString(36)}`;
}

/** The thread the page has open, from its URL hash (`#thread=<id>`); undefined without one. */
export function threadIdFromUrl(page: Page): string | undefined {
  const m = /#thread=([^&]+)$/.exec(page.url());
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** The chat's parts, by the names of the UI contract. */
export function chat(page: Page) {
  const main = page.getByRole("main", { name: "Chat" });
  const log = main.getByRole("log", { name: "Conversation" });
  return {
    main,
    log,
    status: main.getByTestId("thread-status"),
    message: main.getByLabel("Message", { exact: true }),
    sendButton: main.getByRole("button", { name: "Send", exact: true }),
    stopButton: main.getByRole("button", { name: "Stop", exact: true }),
    userMessages: log.getByTestId("msg-user"),
    answers: log.getByTestId("msg-assistant"),
    lastAnswer: log.getByTestId("msg-assistant").last(),
    toolCard: (callId: string) => log.locator(`article[data-testid="tool-card"][data-call-id="${callId}"]`),
    toolCardsNamed: (name: string) => log.locator('article[data-testid="tool-card"]').filter({ has: page.locator(".tool-name", { hasText: name }) }),
    stoppedNotice: log.getByTestId("run-stopped"),
    runError: log.getByTestId("run-error"),
    requestError: page.getByTestId("request-error"),
    approvalCard: (toolName: string) => main.getByRole("region", { name: `Approval needed: ${toolName}`, exact: true }),
  };
}

/** Waits until the thread's status badge reads exactly `status`. */
export async function waitForStatus(page: Page, status: "idle" | "running" | "waiting_human" | "loading"): Promise<void> {
  await chat(page).status.filter({ hasText: new RegExp(`^${status}$`) }).waitFor();
}

/** Opens `/#thread=<id>` (or `/` for a new chat) and waits until the chat has loaded. */
export async function openPage(page: Page, baseUrl: string, threadId?: string): Promise<void> {
  await page.goto(threadId ? `${baseUrl}/#thread=${encodeURIComponent(threadId)}` : `${baseUrl}/`);
  await chat(page).status.filter({ hasNotText: "loading" }).waitFor();
}

/** Types into the Message box and clicks Send (the chat must be idle). */
export async function sendMessage(page: Page, text: string): Promise<void> {
  const c = chat(page);
  await c.message.fill(text);
  await c.sendButton.click();
}

/** Waits for a tool card of `callId` with this `data-status`. */
export async function waitForToolStatus(page: Page, callId: string, status: string): Promise<Locator> {
  const card = chat(page).log.locator(`article[data-testid="tool-card"][data-call-id="${callId}"][data-status="${status}"]`);
  await card.waitFor();
  return card;
}

/** The call id of an approval card (its `data-call-id`). */
export async function callIdOf(card: Locator): Promise<string> {
  const id = await card.getAttribute("data-call-id");
  if (!id) throw new Error("approval card without data-call-id");
  return id;
}

/**
 * Presses Tab (or Shift+Tab) until `target` has the focus, as a keyboard user would; throws after
 * `max` presses. Returns how many presses it took.
 */
export async function tabTo(page: Page, target: Locator, opts: { shift?: boolean; max?: number } = {}): Promise<number> {
  const max = opts.max ?? 30;
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press(opts.shift ? "Shift+Tab" : "Tab");
    if (await target.evaluate((el) => el === document.activeElement)) return i;
  }
  const focused = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120) ?? "none");
  throw new Error(`${opts.shift ? "Shift+Tab" : "Tab"} did not reach the target in ${max} presses; focus is on ${focused}`);
}

export interface ThreadMessage {
  role: "user" | "assistant" | "tool";
  content: string;
  tool_call_id?: string;
  name?: string;
  status?: string;
  edited?: boolean;
}

export interface ThreadView {
  thread_id: string;
  status: string;
  last_outcome: string | null;
  messages: ThreadMessage[];
  pending: { interrupt_id: string; expires_at: string; calls: Array<{ call_id: string; name: string }> } | null;
}

/** `GET /threads/:id` as the server answers it (the API, not the page). */
export async function getThread(baseUrl: string, threadId: string, token?: string): Promise<ThreadView> {
  const res = await fetch(`${baseUrl}/threads/${encodeURIComponent(threadId)}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (res.status !== 200) throw new Error(`GET /threads/${threadId} → ${res.status} ${await res.text()}`);
  return (await res.json()) as ThreadView;
}

/** The content of the thread's last assistant message with text. */
export function lastAssistantText(view: ThreadView): string | undefined {
  return view.messages.filter((m) => m.role === "assistant" && m.content).at(-1)?.content;
}

/** Parses a countdown text ("Expires in m:ss") into seconds; null for anything else ("Expired"). */
export function countdownSeconds(text: string | null): number | null {
  const m = /^Expires in (\d+):(\d\d)$/.exec((text ?? "").trim());
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}
