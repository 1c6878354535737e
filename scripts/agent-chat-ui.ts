/**
 * LangChain's Agent Chat UI (vendor/agent-chat-ui) approves a refund against a real tollgate.
 *
 *   npm run agent-chat-ui              # install + build only when the vendored source changed
 *   npm run agent-chat-ui -- --rebuild # install and build again regardless
 *
 * 1. copies vendor/agent-chat-ui to .cache/agent-chat-ui/app (unless the copy is already the same);
 * 2. installs it with `npx -y pnpm@10.5.1 install --frozen-lockfile` (store: .cache/agent-chat-ui/pnpm-store),
 *    skipped while package.json and pnpm-lock.yaml are unchanged;
 * 3. `next build`, skipped while the source and its install are unchanged;
 * 4. starts tollgate (`tsx src/main.ts`: auth off, the offline demo model, a temp DATA_DIR,
 *    CORS_ORIGINS = the UI's origin) and `next start`;
 * 5. in headless Chromium opens the UI at `?apiUrl=<tollgate>/langgraph&assistantId=agent`, asks
 *    "refund order A-1002 5 dollars", waits for the approval card, clicks Approve, waits for the
 *    answer, and writes docs/screenshots/agent-chat-ui-approval.png and -approved.png;
 * 6. checks through tollgate's own API (`GET /threads/{id}`) that refund_order ran once with status
 *    ok, and in the data dir's SQLite that `refunds` holds exactly one row.
 *
 * Prints one line per step with its time; exits 1 with what did not happen when a step fails. Servers
 * and browser are always stopped and the data dir removed. Logs: .cache/agent-chat-ui/*.log.
 */
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import type { ThreadView } from "../src/protocol/index.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../test/helpers/browser.js";
import { freePort } from "../test/helpers/free-port.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const VENDOR = path.join(ROOT, "vendor/agent-chat-ui");
const CACHE = path.join(ROOT, ".cache/agent-chat-ui");
const APP = path.join(CACHE, "app");
const STORE = path.join(CACHE, "pnpm-store");
const SHOTS = path.join(ROOT, "docs/screenshots");
/** The pnpm the UI's package.json names (`packageManager`) and its lockfile was made with. */
const PNPM = "pnpm@10.5.1";
/** What the source hash and the copy leave out: install and build output inside the app dir. */
const GENERATED = new Set(["node_modules", ".next", "next-env.d.ts"]);

/** The demo model answers this with a lookup and a refund_order call that waits at the gate. */
const MESSAGE = "refund order A-1002 5 dollars";
const FINAL_ANSWER = "Done: refunded $5.00 on A-1002.";

const T = {
  install: 10 * 60_000,
  build: 15 * 60_000,
  serverReady: 30_000,
  page: 30_000,
  interrupt: 60_000,
  answer: 60_000,
  settle: 15_000,
  browserClose: 10_000,
  stopGrace: 10_000,
};

// ---------------------------------------------------------------------------------------------
// Output, deadlines, processes

const t0 = Date.now();
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const say = (line: string) => process.stdout.write(`agent-chat-ui: ${line}\n`);

class StepFailure extends Error {}

/** `p`'s outcome, or a StepFailure saying what did not happen once `ms` has passed. */
async function within<T>(p: PromiseLike<T>, ms: number, didNotHappen: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepFailure(`${didNotHappen} within ${secs(ms)}`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Every child runs in its own process group, so stopping it stops what it started too. */
const children = new Set<ChildProcess>();
/** What `cleanup()` closes and removes, also after a failure or a signal. */
const open: { browser?: Browser; dataDir?: string } = {};

function start(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; log: string }): ChildProcess {
  const out = fs.openSync(opts.log, "w");
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", out, out] });
  fs.closeSync(out);
  children.add(child);
  child.once("exit", () => children.delete(child));
  child.once("error", () => children.delete(child));
  return child;
}

const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null && c.pid !== undefined;

/** SIGTERM to the child's process group; SIGKILL when it is still there after the grace time. */
async function stop(child: ChildProcess): Promise<void> {
  if (!alive(child)) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      /* already gone */
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), T.stopGrace);
  await Promise.race([exited, sleep(T.stopGrace + 2_000)]);
  clearTimeout(timer);
}

function exitOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    if (!alive(child)) return resolve(`exit code ${child.exitCode}, signal ${child.signalCode}`);
    child.once("exit", (code, sig) => resolve(`exit code ${code}, signal ${sig}`));
    child.once("error", (e) => resolve(`spawn error: ${e.message}`));
  });
}

function tail(file: string, lines = 40): string {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Runs a command to its end; fails with the log's tail when it exits non-zero or overruns. */
async function run(what: string, cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; log: string; ms: number }) {
  const child = start(cmd, args, opts);
  const ended = exitOf(child);
  let how: string;
  try {
    how = await within(ended, opts.ms, `${what} did not finish`);
  } catch (e) {
    await stop(child);
    throw new StepFailure(`${(e as Error).message}\n--- ${opts.log} (tail) ---\n${tail(opts.log)}`);
  }
  if (child.exitCode !== 0) throw new StepFailure(`${what} failed (${how})\n--- ${opts.log} (tail) ---\n${tail(opts.log)}`);
}

/** Only what a child needs from this shell: no MODEL, OPENAI_*, AUTH_*, NEXT_PUBLIC_* … leaks in. */
function baseEnv(): NodeJS.ProcessEnv {
  const keep = ["PATH", "HOME", "USER", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "TZ"];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
}

// ---------------------------------------------------------------------------------------------
// Cache: copy, install, build

function walk(dir: string, rel = ""): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!rel && GENERATED.has(e.name)) continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(path.join(dir, e.name), r));
    else out.push(r);
  }
  return out;
}

/** sha256 over the tree's paths and contents, install and build output left out. */
function treeHash(dir: string): string {
  const h = crypto.createHash("sha256");
  for (const r of walk(dir)) {
    const p = path.join(dir, r);
    const st = fs.lstatSync(p);
    h.update(`${r}\0${st.isSymbolicLink() ? `-> ${fs.readlinkSync(p)}` : crypto.createHash("sha256").update(fs.readFileSync(p)).digest("hex")}\n`);
  }
  return h.digest("hex");
}

const sha = (...parts: string[]) => crypto.createHash("sha256").update(parts.join("\0")).digest("hex");
const readStamp = (name: string) => (fs.existsSync(path.join(CACHE, name)) ? fs.readFileSync(path.join(CACHE, name), "utf8").trim() : "");
const writeStamp = (name: string, v: string) => fs.writeFileSync(path.join(CACHE, name), `${v}\n`);
const dropStamp = (name: string) => fs.rmSync(path.join(CACHE, name), { force: true });

/** Makes APP the vendored source (keeping its node_modules and .next); returns the source hash. */
function syncSource(): { hash: string; copied: boolean } {
  if (!fs.existsSync(path.join(VENDOR, "package.json"))) throw new StepFailure(`${VENDOR} has no package.json: the vendored UI is missing`);
  const hash = treeHash(VENDOR);
  if (fs.existsSync(APP) && treeHash(APP) === hash) return { hash, copied: false };
  fs.mkdirSync(APP, { recursive: true });
  for (const e of fs.readdirSync(APP)) if (!GENERATED.has(e)) fs.rmSync(path.join(APP, e), { recursive: true, force: true });
  fs.cpSync(VENDOR, APP, {
    recursive: true,
    filter: (src) => !GENERATED.has(path.relative(VENDOR, src).split(path.sep)[0]!),
  });
  if (treeHash(APP) !== hash) throw new StepFailure(`the copy in ${APP} differs from ${VENDOR} after copying`);
  return { hash, copied: true };
}

async function install(force: boolean): Promise<{ key: string; ran: boolean }> {
  const key = sha(
    fs.readFileSync(path.join(APP, "package.json"), "utf8"),
    fs.readFileSync(path.join(APP, "pnpm-lock.yaml"), "utf8"),
    PNPM,
    process.version,
    process.platform,
    process.arch,
  );
  if (!force && readStamp("install.stamp") === key && fs.existsSync(path.join(APP, "node_modules/.modules.yaml"))) return { key, ran: false };
  dropStamp("install.stamp");
  dropStamp("build.stamp");
  await run(`${PNPM} install`, "npx", [
    "-y", PNPM, "install", "--frozen-lockfile", "--store-dir", STORE, "--reporter", "append-only", "--config.confirmModulesPurge=false",
  ], { cwd: APP, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" }, log: path.join(CACHE, "install.log"), ms: T.install });
  writeStamp("install.stamp", key);
  return { key, ran: true };
}

async function build(sourceHash: string, installKey: string, force: boolean): Promise<boolean> {
  const key = sha(sourceHash, installKey);
  if (!force && readStamp("build.stamp") === key && fs.existsSync(path.join(APP, ".next/BUILD_ID"))) return false;
  dropStamp("build.stamp");
  // NEXT_PUBLIC_* are inlined at build time: none may come from this shell, so the UI is configured
  // only by its query string.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("NEXT_PUBLIC_")));
  await run("next build", path.join(APP, "node_modules/.bin/next"), ["build"], {
    cwd: APP,
    env: { ...env, NEXT_TELEMETRY_DISABLED: "1" },
    log: path.join(CACHE, "build.log"),
    ms: T.build,
  });
  writeStamp("build.stamp", key);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Servers

/** Rejects with the log's tail as soon as the child exits: a server that dies mid-run fails the wait. */
function diesFirst(child: ChildProcess, name: string, log: string): Promise<never> {
  return exitOf(child).then((how) => {
    throw new StepFailure(`${name} exited (${how})\n--- ${log} (tail) ---\n${tail(log)}`);
  });
}

async function startTollgate(dataDir: string, uiOrigin: string): Promise<{ url: string; child: ChildProcess; died: Promise<never> }> {
  const log = path.join(CACHE, "tollgate.log");
  // As `npm start` runs it: the built-in offline demo model (no MODEL / OPENAI_* in the env), no auth
  // (loopback only), and only the UI's origin allowed to call it from a browser.
  const child = start(path.join(ROOT, "node_modules/.bin/tsx"), ["src/main.ts"], {
    cwd: ROOT,
    env: { ...baseEnv(), PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, CORS_ORIGINS: uiOrigin },
    log,
  });
  const died = diesFirst(child, "tollgate", log);
  died.catch(() => {});
  const ready = (async () => {
    for (;;) {
      const m = /^tollgate listening on (http:\/\/\S+)\s*$/m.exec(fs.readFileSync(log, "utf8"));
      if (m) return m[1]!;
      await sleep(100);
    }
  })();
  const url = await within(Promise.race([ready, died]), T.serverReady, "tollgate did not print 'tollgate listening on <url>'");
  return { url, child, died };
}

async function startUi(port: number): Promise<{ url: string; child: ChildProcess; died: Promise<never> }> {
  const log = path.join(CACHE, "next.log");
  const child = start(path.join(APP, "node_modules/.bin/next"), ["start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: APP,
    env: { ...baseEnv(), NEXT_TELEMETRY_DISABLED: "1" },
    log,
  });
  const died = diesFirst(child, "next start", log);
  died.catch(() => {});
  const url = `http://127.0.0.1:${port}`;
  const ready = (async () => {
    for (;;) {
      try {
        const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
        if (res.ok) return;
      } catch {
        /* not listening yet */
      }
      await sleep(200);
    }
  })();
  await within(Promise.race([ready, died]), T.serverReady, `next start did not answer GET ${url}/ with 200`);
  return { url, child, died };
}

/** Polls tollgate's `GET /threads/{id}` until `ok` holds. */
async function untilThread(url: string, ok: (v: ThreadView) => boolean, didNotHappen: string): Promise<ThreadView> {
  let last: ThreadView | undefined;
  const poll = (async () => {
    for (;;) {
      last = await getJson<ThreadView>(url);
      if (ok(last)) return last;
      await sleep(200);
    }
  })();
  try {
    return await within(poll, T.settle, didNotHappen);
  } catch (e) {
    throw new StepFailure(`${(e as Error).message}; last seen: ${JSON.stringify(last ? { status: last.status, pending: last.pending?.calls.map((c) => c.name) ?? null } : null)}`);
  }
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new StepFailure(`GET ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

// ---------------------------------------------------------------------------------------------
// The browser part

/**
 * Debian's Chromium with the flags the browser suites use (test/helpers/browser.ts). Playwright's
 * own signal handlers are off: on Ctrl-C it would close the browser and exit before `cleanup()`
 * stopped the servers.
 */
async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: CHROMIUM_ARGS,
    timeout: T.page,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}

interface ApiCall {
  method: string;
  path: string;
  body?: string;
  status: number;
  response?: string;
}

async function approveInBrowser(page: Page, uiUrl: string, apiUrl: string, failed: Promise<never>) {
  // Each wait also loses at once to a server exiting or a /langgraph request answered >= 400.
  const wait = <T>(p: Promise<T>, ms: number, didNotHappen: string) => within(Promise.race([p, failed]), ms, didNotHappen);
  const textHas = (s: string) => page.waitForFunction((x) => document.body.innerText.includes(x), s, { timeout: 0, polling: 200 });

  const url = `${uiUrl}/?apiUrl=${encodeURIComponent(apiUrl)}&assistantId=agent`;
  await wait(page.goto(url, { waitUntil: "load", timeout: 0 }), T.page, `the UI did not load (${url})`);
  const input = page.locator('textarea[placeholder="Type your message..."]');
  await wait(input.waitFor({ state: "visible", timeout: 0 }), T.page, "the chat input did not appear (the UI stayed on its setup form or could not reach tollgate's GET /info)");
  await wait(input.fill(MESSAGE, { timeout: 0 }), T.page, "the message could not be typed into the chat input");
  await wait(page.locator('button[type="submit"]').first().click({ timeout: 0 }), T.page, "the Send button could not be clicked");

  const approve = page.locator('button:has-text("Approve")').first();
  await wait(approve.waitFor({ state: "visible", timeout: 0 }), T.interrupt, `the approval card (an Approve button) did not appear after sending "${MESSAGE}"`);
  await wait(textHas("needs your approval"), T.settle, `the AI's "…needs your approval." line did not render`);
  await wait(page.waitForURL(/[?&]threadId=/, { timeout: 0 }), T.settle, "the UI did not put the thread's id in its URL (?threadId=)");
  const threadId = new URL(page.url()).searchParams.get("threadId")!;
  return { threadId, approve, wait, textHas };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const force = process.argv.includes("--rebuild");
  const unknown = process.argv.slice(2).filter((a) => a !== "--rebuild");
  if (unknown.length) throw new StepFailure(`usage: npm run agent-chat-ui [-- --rebuild]; got '${unknown.join(" ")}'`);
  fs.mkdirSync(CACHE, { recursive: true });

  let t = Date.now();
  const src = syncSource();
  say(`copy     ${src.copied ? `vendor/agent-chat-ui -> ${path.relative(ROOT, APP)}` : "up to date"} (${secs(Date.now() - t)})`);

  t = Date.now();
  const inst = await install(force);
  say(`install  ${inst.ran ? `${PNPM} install --frozen-lockfile` : "skipped, lockfile unchanged"} (${secs(Date.now() - t)})`);

  t = Date.now();
  const built = await build(src.hash, inst.key, force);
  say(`build    ${built ? "next build" : "skipped, source unchanged"} (${secs(Date.now() - t)})`);

  const tRun = Date.now();
  const dataDir = (open.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-acui-")));
  let page: Page | undefined;
  const calls: ApiCall[] = [];
  try {
    t = Date.now();
    const uiPort = await freePort();
    const uiOrigin = `http://127.0.0.1:${uiPort}`;
    const tollgate = await startTollgate(dataDir, uiOrigin);
    const ui = await startUi(uiPort);
    const apiUrl = `${tollgate.url}/langgraph`;
    say(`servers  tollgate ${tollgate.url}, UI ${ui.url} (${secs(Date.now() - t)})`);

    t = Date.now();
    const browser = (open.browser = await within(launchBrowser(), T.page, "Chromium did not start"));
    page = await browser.newPage({ viewport: { width: 1400, height: 2000 } });
    let rejectApi!: (e: Error) => void;
    const apiFailed = new Promise<never>((_, reject) => (rejectApi = reject));
    apiFailed.catch(() => {});
    page.on("response", async (res) => {
      const req = res.request();
      if (!req.url().startsWith(apiUrl)) return;
      const call: ApiCall = { method: req.method(), path: req.url().slice(apiUrl.length), body: req.postData() ?? undefined, status: res.status() };
      calls.push(call);
      if (res.status() >= 400) {
        call.response = await res.text().catch(() => "(unreadable)");
        rejectApi(new StepFailure(`tollgate refused a request of the UI:\n${describe(call)}`));
      }
    });
    const failed = Promise.race([apiFailed, tollgate.died, ui.died]);
    failed.catch(() => {});

    const { threadId, approve, wait, textHas } = await approveInBrowser(page, ui.url, apiUrl, failed);
    const threadUrl = `${tollgate.url}/threads/${threadId}`;
    const atGate = await untilThread(threadUrl, (v) => v.status === "waiting_human", `thread ${threadId} did not reach status waiting_human on tollgate while the card shows`);
    const gated = atGate.pending?.calls.map((c) => c.name) ?? [];
    if (gated.join() !== "refund_order") {
      throw new StepFailure(`GET /threads/${threadId} while the card shows: pending calls [${gated.join(", ")}]; expected [refund_order]`);
    }
    await sleep(500); // let the card finish laying out
    const shotApproval = await wait(page.screenshot({ timeout: 0 }), T.page, "the approval screenshot was not taken");

    await wait(approve.click({ timeout: 0 }), T.page, "the Approve button could not be clicked");
    const refused = page.waitForFunction(() => /I did not refund/.test(document.body.innerText), null, { timeout: 0, polling: 200 })
      .then(() => {
        throw new StepFailure("the UI shows 'I did not refund …' after Approve");
      });
    await wait(Promise.race([textHas(FINAL_ANSWER), refused]), T.answer, `the answer "${FINAL_ANSWER}" did not render after Approve`);

    // tollgate's own view of the thread, once the run has ended.
    const view = await untilThread(threadUrl, (v) => v.status === "idle", `thread ${threadId} did not become idle on tollgate after the answer`);
    await sleep(500);
    const shotApproved = await wait(page.screenshot({ timeout: 0 }), T.page, "the approved screenshot was not taken");
    say(`browser  sent, approval card, Approve, answer (${secs(Date.now() - t)})`);

    t = Date.now();
    const refundResults = view.messages.filter((m) => m.role === "tool" && m.name === "refund_order");
    if (refundResults.length !== 1 || refundResults[0]!.status !== "ok") {
      throw new StepFailure(`GET /threads/${threadId}: expected one refund_order tool message with status ok, got ${JSON.stringify(refundResults)}`);
    }
    const last = view.messages.at(-1);
    if (view.pending !== null || last?.role !== "assistant" || last.content !== FINAL_ANSWER) {
      throw new StepFailure(`GET /threads/${threadId}: expected no pending approval and the last message "${FINAL_ANSWER}", got pending ${JSON.stringify(view.pending)}, last ${JSON.stringify(last)}`);
    }
    const db = new Database(path.join(dataDir, "tollgate.db"), { readonly: true, fileMustExist: true });
    let rows: Array<{ order_id: string; amount_cents: number }>;
    try {
      rows = db.prepare("SELECT order_id, amount_cents FROM refunds ORDER BY id").all() as typeof rows;
    } finally {
      db.close();
    }
    if (rows.length !== 1 || rows[0]!.order_id !== "A-1002" || rows[0]!.amount_cents !== 500) {
      throw new StepFailure(`${path.join(dataDir, "tollgate.db")} table refunds: expected one row (A-1002, 500 cents), got ${JSON.stringify(rows)}`);
    }
    say(`verify   GET /threads/${threadId}: refund_order ran once, status ok; refunds table: 1 row (${secs(Date.now() - t)})`);

    fs.mkdirSync(SHOTS, { recursive: true });
    fs.writeFileSync(path.join(SHOTS, "agent-chat-ui-approval.png"), shotApproval);
    fs.writeFileSync(path.join(SHOTS, "agent-chat-ui-approved.png"), shotApproved);
    say(`screens  docs/screenshots/agent-chat-ui-approval.png, docs/screenshots/agent-chat-ui-approved.png`);
  } catch (e) {
    if (page) {
      const shot = path.join(CACHE, "failure.png");
      await within(page.screenshot({ path: shot }), 10_000, "screenshot").then(() => say(`failure screenshot: ${path.relative(ROOT, shot)}`), () => {});
    }
    if (calls.length) say(`requests to /langgraph so far:\n${calls.map((c) => `  ${c.status} ${c.method} ${c.path}`).join("\n")}`);
    throw e;
  } finally {
    await cleanup();
  }
  say(`run      ${secs(Date.now() - tRun)}`);
}

function describe(c: ApiCall): string {
  return `  ${c.method} /langgraph${c.path}\n  body: ${c.body ?? "(none)"}\n  status: ${c.status}\n  response: ${c.response ?? ""}`;
}

/** Closes the browser, stops every child, removes the data dir; safe to call more than once. */
async function cleanup(): Promise<void> {
  const { browser, dataDir } = open;
  open.browser = undefined;
  open.dataDir = undefined;
  if (browser) await within(browser.close(), T.browserClose, "Chromium did not close").catch((e: Error) => say(e.message));
  await Promise.all([...children].map(stop));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}

// Last resort when the process ends without `cleanup()` having finished: no server outlives it.
process.on("exit", () => {
  for (const c of children) if (alive(c)) try { process.kill(-c.pid!, "SIGKILL"); } catch { /* gone */ }
  if (open.dataDir) fs.rmSync(open.dataDir, { recursive: true, force: true });
});

let exiting = false;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    if (exiting) return;
    exiting = true;
    say(`${sig}: stopping the servers`);
    void cleanup().finally(() => process.exit(130));
  });
}

main().then(
  () => {
    say(`PASS in ${secs(Date.now() - t0)}`);
    process.exit(0);
  },
  async (e: unknown) => {
    await cleanup();
    say(`FAIL after ${secs(Date.now() - t0)}: ${e instanceof StepFailure ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
