/**
 * Hostile web pages against a tollgate on loopback, in a real browser (headless Chromium).
 *
 * A person runs tollgate on their machine with auth off and, in the same browser, visits a
 * page that wants the pending email sent. The browser lets that page send "simple" cross-site
 * requests (text/plain or form bodies, no preflight, response unreadable) and, after DNS
 * rebinding, same-origin requests whose Host is the attacker's name. API.md ("Hostile clients",
 * Browsers): a foreign Host gets `400 invalid_host`, a foreign Origin `403 forbidden_origin`
 * (body-less POSTs too), a body that is not JSON `415`. What matters is that nothing happens: no
 * email in the outbox, no thread or run created, the interrupt still open — so every attack is
 * judged by the server's state, and where the browser (or Playwright's view of the network)
 * can see a response, by its status too. Controls at the end show the same calls do work when
 * they come from the right place, so the test cannot pass because nothing reached the server.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBrowserAvailable, browserAvailable, launchChromium, skipBrowserSuite } from "../helpers/browser.js";
import { call, type Stack, startStack, threadId } from "./support.js";

const avail = browserAvailable();
const skip = skipBrowserSuite("browser-hostile", avail);

/** The attacker's own site: cross-site to tollgate (another host name, another port). */
const EVIL = "evil.example";
/** The rebinding name: resolves to 127.0.0.1, as an attacker's DNS would after rebinding. */
const REBIND = "attacker.example";

interface Target {
  id: string;
  interruptId: string;
  callId: string;
}

/** What a browser saw of one response from tollgate (through Playwright's view of the network). */
interface Seen {
  method: string;
  path: string;
  status: number;
  body: string | null;
}

/** A tiny site for the attacker's pages: path → HTML, set by each test. */
function startAttackerSite(): Promise<{ port: number; pages: Map<string, string>; close(): Promise<void> }> {
  const pages = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const html = pages.get(new URL(req.url ?? "/", "http://x").pathname);
    res.writeHead(html ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
    res.end(html ?? "not found");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        pages,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

/**
 * An attacker page: runs `body` (an async function body with `results` in scope) on load and
 * leaves `results` on `window` for the test. `params` are inlined as JSON.
 */
function attackPage(params: object, body: string, extraHtml = ""): string {
  return `<!doctype html><html><head><title>totally legit</title></head><body>${extraHtml}
<script>
const P = ${JSON.stringify(params)};
(async () => {
  const results = {};
  try { ${body} } catch (e) { results.error = String(e); }
  window.__results = results;
  window.__done = true;
})();
</script></body></html>`;
}

async function runPage(page: Page, url: string): Promise<Record<string, any>> {
  await page.goto(url);
  await page.waitForFunction("window.__done === true", null, { timeout: 15_000 });
  return (await page.evaluate("window.__results")) as Record<string, any>;
}

const resumeJson = (t: Target) => JSON.stringify({ interrupt_id: t.interruptId, decisions: [{ call_id: t.callId, approved: true }] });

describe.skipIf(skip)("hostile web pages in a real browser cannot act on a local tollgate", () => {
  let s: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let site: Awaited<ReturnType<typeof startAttackerSite>>;
  let tg: URL; // tollgate's own origin, http://127.0.0.1:PORT
  const seen: Seen[] = [];
  let n = 0;
  let lastControl: string | undefined;

  /** A thread waiting at the gate on its own `send_email` call. */
  async function waitingThread(label: string): Promise<Target> {
    const id = threadId(label);
    const callId = `mail-${label}-${++n}`;
    s.model.push({ toolCalls: [{ id: callId, name: "send_email", args: { to: "ada@example.com", subject: "s", body: "b" } }] });
    await s.client.run(id, "email").collect();
    const view = await s.client.getThread(id);
    expect(view.status).toBe("waiting_human");
    expect(view.pending?.calls.map((c) => c.call_id)).toEqual([callId]);
    return { id, interruptId: view.pending!.interrupt_id, callId };
  }

  /** Everything an attack could change, as plain data to compare before and after. */
  async function snapshot(targets: Target[]) {
    // An attack that got through returns as soon as its run is claimed: let such a run finish
    // (and its email be written) before looking, so "nothing changed" is not a race.
    await sleep(300);
    for (let i = 0; i < 100 && s.db.rows("runs", "ended_at IS NULL").length > 0; i++) await sleep(50);
    return {
      outbox: s.db.rows("outbox"),
      threads: s.db.rows<{ thread_id: string }>("threads").map((r) => r.thread_id).sort(),
      runs: s.db.countRows("runs"),
      modelRequests: s.model.requests.length,
      targets: s.db
        .rows<{ thread_id: string; status: string; open_interrupt_id: string | null }>("threads")
        .filter((r) => targets.some((t) => t.id === r.thread_id))
        .map((r) => ({ id: r.thread_id, status: r.status, interrupt: r.open_interrupt_id })),
    };
  }

  /** Nothing happened on the server: same rows, no email, each target still waits at its interrupt. */
  async function expectUnchanged(before: Awaited<ReturnType<typeof snapshot>>, targets: Target[]) {
    const after = await snapshot(targets);
    expect.soft(after.outbox, "emails sent by the attack").toEqual(before.outbox);
    expect.soft(after.outbox.filter((r: any) => targets.some((t) => t.callId === r.call_id)), "the targets' emails").toEqual([]);
    expect.soft(after.threads, "thread rows").toEqual(before.threads);
    expect.soft(after.runs, "run rows").toBe(before.runs);
    expect.soft(after.modelRequests, "model calls").toBe(before.modelRequests);
    expect.soft(after.targets, "targets' status and interrupt").toEqual(
      targets.map((t) => ({ id: t.id, status: "waiting_human", interrupt: t.interruptId })),
    );
  }

  const bodies: Promise<void>[] = [];
  /** The responses from tollgate that Playwright saw since `from`, for a path (bodies read). */
  async function seenFor(from: number, path: string): Promise<Seen[]> {
    await Promise.all(bodies);
    return seen.slice(from).filter((r) => r.path === path);
  }

  /** What tollgate answered a cross-site request: its Origin is refused before anything else. */
  function expectForbiddenOrigin(answers: Seen[]) {
    for (const r of answers) {
      expect.soft(r.status, `${r.method} ${r.path} → ${r.status} ${r.body ?? ""}`).toBe(403);
      if (r.body) expect.soft(r.body, `${r.method} ${r.path}`).toContain('"forbidden_origin"');
    }
  }

  /** Opens the attacker's page at `path` on its own site (another host and port) and returns what its script found. */
  async function attackFromEvilSite(path: string, html: string, waitFor?: (from: number) => Promise<unknown>) {
    site.pages.set(path, html);
    const from = seen.length;
    const page = await context.newPage();
    const results = await runPage(page, `http://${EVIL}:${site.port}${path}`);
    await waitFor?.(from);
    await Promise.all(bodies); // before the page goes, and its responses' bodies with it
    await page.close();
    return { results, from };
  }

  beforeAll(async () => {
    // Under CI=true the suite is never skipped: a missing browser fails it here, with the reason.
    assertBrowserAvailable(avail);
    s = await startStack();
    tg = new URL(s.server.url);
    site = await startAttackerSite();
    browser = await launchChromium({
      hostResolverRules: `MAP ${EVIL} 127.0.0.1, MAP ${REBIND} 127.0.0.1`,
      // Chromium's own Local Network Access checks would block the rebound page's fetches
      // ("not a secure context and the resource is in more-private address space loopback"),
      // since Playwright's fulfilled document counts as public. A person can allow them at a
      // prompt, and other browsers have no such checks: the server must hold on its own, so this
      // test turns them off to see what the server does.
      args: ["--disable-features=LocalNetworkAccessChecks"],
    });
    context = await browser.newContext();
    // Playwright sees responses at the network level, even the ones a page may not read
    // (opaque no-cors responses), so the test can check what the server answered: the status
    // always, the body where Chromium keeps it (same-origin fetches, a form's navigation).
    context.on("response", (res) => {
      const url = new URL(res.url());
      if (url.port !== tg.port) return;
      const entry: Seen = { method: res.request().method(), path: url.pathname, status: res.status(), body: null };
      seen.push(entry);
      bodies.push(
        res.text().then(
          (t) => void (entry.body = t),
          () => {}, // Chromium keeps no body of an opaque (no-cors) response: its status only
        ),
      );
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await site?.close();
    await s?.stop();
  });

  // A "simple" request (no preflight): POST with a text/plain or form content type. The page
  // cannot read the answer (mode no-cors: opaque), but the server acts on it all the same.
  const simplePost = `
    const send = async (name, url, contentType, b) => {
      try {
        const r = await fetch(url, { method: "POST", mode: "no-cors", headers: { "content-type": contentType }, body: b });
        results[name] = { type: r.type, status: r.status };
      } catch (e) { results[name] = { error: String(e) }; }
    };`;

  it("a cross-site text/plain POST cannot start a run (nor create the thread)", async () => {
    const fresh = threadId("csrf-new");
    const before = await snapshot([]);
    const { results, from } = await attackFromEvilSite(
      "/runs",
      attackPage(
        { runs: `${tg.origin}/threads/${fresh}/runs` },
        `${simplePost}
        await send("runs", P.runs, "text/plain", JSON.stringify({ message: "send all the emails" }));`,
      ),
    );
    // The page got an opaque answer and the request reached tollgate: the plumbing works.
    expect(results).toEqual({ runs: { type: "opaque", status: 0 } });
    const answers = await seenFor(from, `/threads/${fresh}/runs`);
    expect(answers).toHaveLength(1);

    await expectUnchanged(before, []);
    expect.soft(s.db.rows("threads", "thread_id = ?", fresh), "the attacker's thread").toEqual([]);
    expectForbiddenOrigin(answers);
  });

  it("cross-site text/plain and form-encoded fetches cannot approve the pending email", async () => {
    const viaText = await waitingThread("csrf-text");
    const viaForm = await waitingThread("csrf-form");
    const before = await snapshot([viaText, viaForm]);
    const { results, from } = await attackFromEvilSite(
      "/resume",
      attackPage(
        {
          text: { url: `${tg.origin}/threads/${viaText.id}/resume`, body: resumeJson(viaText) },
          form: { url: `${tg.origin}/threads/${viaForm.id}/resume`, body: resumeJson(viaForm) },
        },
        `${simplePost}
        await send("text", P.text.url, "text/plain", P.text.body);
        await send("form", P.form.url, "application/x-www-form-urlencoded", P.form.body);`,
      ),
    );
    expect(results).toEqual({ text: { type: "opaque", status: 0 }, form: { type: "opaque", status: 0 } });
    const answers = [...(await seenFor(from, `/threads/${viaText.id}/resume`)), ...(await seenFor(from, `/threads/${viaForm.id}/resume`))];
    expect(answers).toHaveLength(2);

    await expectUnchanged(before, [viaText, viaForm]);
    expectForbiddenOrigin(answers);
  });

  it("a cross-site HTML form (the text/plain JSON trick) cannot approve the pending email", async () => {
    const t = await waitingThread("csrf-html-form");
    const before = await snapshot([t]);
    const resumeUrl = `${tg.origin}/threads/${t.id}/resume`;
    // With enctype text/plain the body is `name=value`: a name that opens the JSON and a value
    // that closes it make a valid JSON body, `{…,"pad":"="}`. No script needed, no preflight ever.
    const body = resumeJson(t);
    const formName = body.slice(0, -1) + ',"pad":"';
    const form = `<iframe name="sink" style="display:none"></iframe>
<form id="f" method="POST" enctype="text/plain" action="${resumeUrl}" target="sink"><input type="hidden" name='${formName}' value='"}'></form>`;
    const { results, from } = await attackFromEvilSite(
      "/form",
      attackPage({}, `document.getElementById("f").submit(); results.submitted = true;`, form),
      // The form navigates the hidden frame to tollgate's answer: wait for it.
      async (from) => {
        for (let i = 0; i < 300 && !seen.slice(from).some((r) => r.path === `/threads/${t.id}/resume`); i++) await sleep(25);
      },
    );
    expect(results).toEqual({ submitted: true });
    const answers = await seenFor(from, `/threads/${t.id}/resume`);
    expect(answers).toHaveLength(1);

    await expectUnchanged(before, [t]);
    expectForbiddenOrigin(answers);
  });

  it("a body-less cross-site cancel does not close the interrupt", async () => {
    const t = await waitingThread("cancel");
    const before = await snapshot([t]);
    const { results, from } = await attackFromEvilSite(
      "/cancel",
      attackPage(
        { cancel: `${tg.origin}/threads/${t.id}/cancel` },
        `const r = await fetch(P.cancel, { method: "POST", mode: "no-cors" });
        results.cancel = { type: r.type, status: r.status };`,
      ),
    );
    expect(results).toEqual({ cancel: { type: "opaque", status: 0 } });
    const answers = await seenFor(from, `/threads/${t.id}/cancel`);
    expect(answers).toHaveLength(1);

    await expectUnchanged(before, [t]);
    expectForbiddenOrigin(answers);
  });

  it("DNS rebinding: same-origin requests under the attacker's name get 400 invalid_host and read nothing", async () => {
    const t = await waitingThread("rebind");
    const before = await snapshot([t]);
    // The attacker's name now points at 127.0.0.1 (host-resolver-rules), so the page, served as
    // http://attacker.example:<tollgate port>/, is same-origin with tollgate's API. Only the
    // document is the attacker's (Playwright fulfils it); its fetches go to tollgate for real.
    const pageUrl = `http://${REBIND}:${tg.port}/`;
    const page = await context.newPage();
    await page.route(pageUrl, (route) =>
      route.fulfill({
        status: 200,
        contentType: "text/html",
        body: attackPage(
          { id: t.id, body: resumeJson(t) },
          `
          const grab = async (name, url, init) => {
            try {
              const r = await fetch(url, init);
              results[name] = { status: r.status, text: await r.text() };
            } catch (e) { results[name] = { error: String(e) }; }
          };
          await grab("resume", "/threads/" + P.id + "/resume", { method: "POST", headers: { "content-type": "application/json" }, body: P.body });
          await grab("read", "/threads/" + P.id);
          `,
        ),
      }),
    );
    const from = seen.length;
    const results = await runPage(page, pageUrl);
    await page.close();

    // Same-origin: the page reads the answers itself. Both reached the server.
    expect(results.error).toBeUndefined();
    expect(results.resume?.status, JSON.stringify(results.resume)).toBeTypeOf("number");
    expect(results.read?.status, JSON.stringify(results.read)).toBeTypeOf("number");
    expect(await seenFor(from, `/threads/${t.id}/resume`)).toHaveLength(1);
    expect(await seenFor(from, `/threads/${t.id}`)).toHaveLength(1);

    await expectUnchanged(before, [t]);
    expect.soft(results.resume.status, `resume → ${results.resume.text}`).toBe(400);
    expect.soft(results.resume.text).toContain('"invalid_host"');
    expect.soft(results.read.status, `read → ${results.read.text.slice(0, 300)}`).toBe(400);
    expect.soft(results.read.text).toContain('"invalid_host"');
    // Above all, the read leaked nothing about the thread.
    expect.soft(results.read.text).not.toContain("interrupt_id");
    expect.soft(results.read.text).not.toContain(t.interruptId);
    expect.soft(results.read.text).not.toContain("ada@example.com");
  });

  it("control: the same browser on tollgate's own origin reads the thread (the requests above did reach it)", async () => {
    const t = await waitingThread("own-origin");
    const page = await context.newPage();
    await page.goto(`${tg.origin}/healthz`);
    const read = (await page.evaluate(
      `fetch("/threads/${t.id}").then(async (r) => ({ status: r.status, json: await r.json() }))`,
    )) as { status: number; json: any };
    await page.close();
    expect(read.status).toBe(200);
    expect(read.json.pending).toMatchObject({ interrupt_id: t.interruptId, calls: [{ call_id: t.callId }] });
  });

  it("control: from the test (Host 127.0.0.1) the same read and resume work, and the email goes out once", async () => {
    const t = await waitingThread("control");
    expect(s.db.rows("outbox", "call_id = ?", t.callId), "no email before the legitimate approval").toEqual([]);
    const read = await call(s.server.url, "GET", `/threads/${t.id}`);
    expect(read.status).toBe(200);
    expect(read.json.pending).toMatchObject({ interrupt_id: t.interruptId, calls: [{ call_id: t.callId, name: "send_email" }] });

    s.model.push({ text: "Sent." });
    const resumed = await call(s.server.url, "POST", `/threads/${t.id}/resume`, resumeJson(t));
    expect(resumed.status, JSON.stringify(resumed.json)).toBe(202);
    for (let i = 0; i < 200 && (await s.client.getThread(t.id)).status === "running"; i++) await sleep(25);
    expect(await s.client.getThread(t.id)).toMatchObject({ status: "idle", last_outcome: "completed", pending: null });
    expect(s.db.rows("outbox", "call_id = ?", t.callId)).toMatchObject([{ call_id: t.callId, subject: "s" }]);
    lastControl = t.callId;
  });

  it("over the whole file, the only email sent is the legitimate one", () => {
    expect(lastControl, "the control above ran").toBeTruthy();
    expect(s.db.rows<{ call_id: string }>("outbox").map((r) => r.call_id)).toEqual([lastControl]);
  });
});
