import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { refusals } from "../../protocol/index.js";

/**
 * Where `npm run build:web` writes the page (`npm start` and the tests build it first): dist/web,
 * found from this module's own file, never the cwd. Run from source this is src/faces/api/web-page.ts;
 * in the installed package it is the compiled dist/src/faces/api/web-page.js, beside dist/web.
 */
export const DEFAULT_WEB_DIR = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "../../../dist/web/" : "../../../web/", import.meta.url),
);

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/**
 * The page runs only its own script and talks only to this server: a model's or user's text
 * that slipped into the DOM as markup could neither load nor send anything elsewhere.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

/**
 * `GET /` and `/assets/*`: the built page, read into memory once (a few hundred KiB), served
 * without a token (the page asks for one itself). No directory is walked per request, so no path
 * a client sends can reach a file outside the build.
 */
export function webPageRoutes(dir: string = DEFAULT_WEB_DIR): Hono {
  const assets = loadAssets(dir);
  const app = new Hono();
  const serve = (name: string) => {
    const asset = assets.get(name);
    if (!asset) return undefined;
    return (ifNoneMatch: string | undefined) =>
      new Response(ifNoneMatch === asset.etag ? null : asset.body, {
        status: ifNoneMatch === asset.etag ? 304 : 200,
        headers: { ...PAGE_HEADERS, "content-type": asset.type, etag: asset.etag, "cache-control": "no-cache" },
      });
  };
  app.get("/", (c) => {
    const page = serve("index.html");
    if (!page) throw refusals.pageNotBuilt();
    return page(c.req.header("if-none-match"));
  });
  app.get("/assets/:name", (c) => {
    const asset = serve(`assets/${c.req.param("name")}`);
    if (!asset) throw refusals.noSuchFile();
    return asset(c.req.header("if-none-match"));
  });
  return app;
}

function loadAssets(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const add = (name: string) => {
    const file = path.join(dir, name);
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return;
    const body = new Uint8Array(fs.readFileSync(file));
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    out.set(name, { body, type: TYPES[path.extname(name)] ?? "application/octet-stream", etag });
  };
  add("index.html");
  const assetsDir = path.join(dir, "assets");
  if (fs.existsSync(assetsDir)) for (const name of fs.readdirSync(assetsDir)) add(`assets/${name}`);
  return out;
}
