import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Hono } from "hono";
import { afterAll, describe, expect, it } from "vitest";
import { AppError, ERROR_STATUS } from "../../../../src/protocol/index.js";
import { webPageRoutes } from "../../../../src/faces/api/web-page.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A built page in a temp dir, with a file beside it that must never be served. */
function builtPage(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-web-"));
  dirs.push(root);
  const dir = path.join(root, "web");
  fs.mkdirSync(path.join(dir, "assets"), { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>t</title>");
  fs.writeFileSync(path.join(dir, "assets/app.js"), "console.log(1)");
  fs.writeFileSync(path.join(root, "secret.txt"), "not for the web");
  return dir;
}

/** The routes as the server mounts them: refusals are AppErrors that the app's onError answers. */
function mounted(dir: string): Hono {
  const app = new Hono();
  app.route("/", webPageRoutes(dir));
  app.onError((err, c) => (err instanceof AppError ? c.json({ error: { code: err.code, message: err.message } }, ERROR_STATUS[err.code]) : c.text("unexpected", 500)));
  return app;
}

describe("the page's routes", () => {
  const app = mounted(builtPage());

  it("serves the page with a CSP that allows only its own script and this server", async () => {
    const res = await app.request("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await res.text()).toContain("<title>t</title>");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("serves a built asset with its type, and 304 when the browser has it", async () => {
    const res = await app.request("/assets/app.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const again = await app.request("/assets/app.js", { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  it("never serves a file outside the build, however the path is spelled", async () => {
    for (const p of ["/assets/../../secret.txt", "/assets/..%2F..%2Fsecret.txt", "/assets/%2e%2e%2fsecret.txt", "/secret.txt", "/assets/"]) {
      const res = await app.request(p);
      expect(res.status, p).toBe(404);
      expect(await res.text(), p).not.toContain("not for the web");
    }
  });

  it("says how to build the page when it is not built, instead of a blank 404", async () => {
    const empty = mounted(path.join(os.tmpdir(), "tollgate-no-such-dir-" + process.pid));
    const res = await empty.request("/");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("npm run build:web");
  });
});
