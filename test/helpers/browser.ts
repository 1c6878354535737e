/**
 * Headless Chromium for browser tests: Debian's `/usr/bin/chromium` driven by playwright-core.
 * Playwright's own browser downloads cannot work here (no network but the package registries),
 * so the browser comes from apt (`apt-get install -y chromium`, done by `.ci/run`).
 *
 * A browser suite asks `browserAvailable()` first. Without a browser it prints one line saying
 * why and skips — except under `CI=true`, where a missing browser must fail the suite instead of
 * letting it pass by skipping (see `requireBrowserInCi`).
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import type { Browser, BrowserContext, Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * As root, in a closed network: no sandbox (root), no GPU, and none of Chromium's own
 * background connections, which this machine's network refuses (many at a time) and which
 * would otherwise fail Google host look-ups at every start.
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--headless",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Availability {
  ok: boolean;
  why?: string;
}

/** Is Debian's Chromium installed and playwright-core importable? Synchronous, for `describe.skipIf`. */
export function browserAvailable(): Availability {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    return { ok: false, why: `${CHROMIUM_PATH} not found (install it: apt-get install -y chromium)` };
  }
  try {
    createRequire(import.meta.url).resolve("playwright-core");
  } catch (e) {
    return { ok: false, why: `playwright-core is not importable (${(e as Error).message.split("\n")[0]}); run npm install` };
  }
  return { ok: true };
}

/**
 * What a browser suite does with `browserAvailable()`: returns true when it should skip (and
 * prints one line saying why). Under `CI=true` it never skips: the suite runs and its
 * `beforeAll` must call `assertBrowserAvailable()`, which fails it with the reason.
 */
export function skipBrowserSuite(suite: string, avail: Availability = browserAvailable()): boolean {
  if (avail.ok || process.env.CI === "true") return false;
  console.log(`[${suite}] skipped: no browser: ${avail.why}`);
  return true;
}

/** Throws the reason when no browser is available (CI must not pass by skipping). */
export function assertBrowserAvailable(avail: Availability = browserAvailable()): void {
  if (!avail.ok) throw new Error(`browser tests need Chromium (CI=true does not skip them): ${avail.why}`);
}

export interface LaunchOptions {
  /** Passed as `--host-resolver-rules=...`, e.g. `MAP attacker.example 127.0.0.1`. */
  hostResolverRules?: string;
  /** More Chromium flags. */
  args?: string[];
}

/**
 * Launches headless Chromium. Playwright gives each `launch()` a fresh, empty user-data-dir of
 * its own (a temp dir removed on `close()`; it refuses a `--user-data-dir` flag with `launch`),
 * so no profile, cache or permission carries over between runs. Close the browser when done.
 */
export async function launchChromium(opts: LaunchOptions = {}): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  const args = [...CHROMIUM_ARGS];
  if (opts.hostResolverRules) args.push(`--host-resolver-rules=${opts.hostResolverRules}`);
  if (opts.args) args.push(...opts.args);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args,
    timeout: 30_000,
  });
}

/**
 * A page in a fresh browser context (its own cookies and storage: another person), 10 s default
 * timeouts, each uncaught page error and Content Security Policy refusal reported to `onError`.
 * The caller closes the context.
 */
export async function pageInNewContext(
  browser: Browser,
  o: { viewport?: { width: number; height: number }; onError: (message: string) => void },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: o.viewport ?? { width: 1100, height: 800 } });
  context.setDefaultTimeout(10_000);
  // A CSP refusal caught by the page's own code is only a DOM event: say it on the console.
  await context.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (e) => console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`)),
  );
  const page = await context.newPage();
  page.on("pageerror", (e) => o.onError(`${e.name}: ${e.message}`));
  // The page runs under a strict CSP; anything it refuses is a bug in the page (or a hole it closed).
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|unsafe-eval/i.test(m.text())) o.onError(`CSP: ${m.text()}`);
  });
  return { context, page };
}
