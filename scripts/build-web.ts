/**
 * Builds the web page (src/web) into dist/web: one bundled script, one stylesheet, index.html.
 * Run by `npm start` (prestart) and by the test setup, so a fresh clone needs no extra step; it
 * takes well under a second. No CDN: everything the page loads comes from this server.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Builds into `outDir` (default dist/web); returns the directory. */
export async function buildWeb(outDir = path.join(root, "dist/web")): Promise<string> {
  const assets = path.join(outDir, "assets");
  fs.mkdirSync(assets, { recursive: true });
  await build({
    entryPoints: { app: path.join(root, "src/web/main.tsx") },
    outdir: assets,
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022"],
    jsx: "automatic",
    sourcemap: false,
    legalComments: "none",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "warning",
  });
  fs.copyFileSync(path.join(root, "src/web/styles.css"), path.join(assets, "styles.css"));
  fs.copyFileSync(path.join(root, "src/web/index.html"), path.join(outDir, "index.html"));
  return outDir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const out = await buildWeb(process.argv[2]);
  console.log(`web page built in ${Date.now() - started} ms: ${path.relative(process.cwd(), out) || "."}`);
}
