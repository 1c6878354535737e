/**
 * Builds the web page (src/web) into dist/web: one bundled script, one stylesheet, index.html.
 * Run by `npm start` (prestart) and by the test setup, so a fresh clone needs no extra step; it
 * takes well under a second. No CDN: everything the page loads comes from this server.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * zod re-exports every one of its ~40 message locales from its index, which no bundler can drop:
 * they were a third of the page. The page shows the server's messages, never zod's, so it gets
 * English only (the one zod configures by default).
 */
const englishOnlyZod: Plugin = {
  name: "english-only-zod",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: "zod-locales", namespace: "zod-locales" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, () => ({
      contents: 'export { default as en } from "zod/v4/locales/en.js";',
      resolveDir: root,
    }));
  },
};

/** Builds into `outDir` (default dist/web); returns the directory. */
export async function buildWeb(outDir = path.join(root, "dist/web")): Promise<string> {
  const assets = path.join(outDir, "assets");
  // The server serves every file here: nothing from an older build may linger.
  fs.rmSync(assets, { recursive: true, force: true });
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
    plugins: [englishOnlyZod],
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
