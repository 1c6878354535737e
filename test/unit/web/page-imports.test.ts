import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../helpers/server-process.js";

/**
 * The page is a client like any team's: it may use the hook, the typed client and the protocol,
 * and nothing of the server (no store, no runs, no config), so it cannot depend on what a team's
 * app would not have. (zod only to switch its code generation off under the page's CSP.)
 */
const ALLOWED = [/^zod$/, /^react$/, /^react-dom\/client$/, /^\.\/[a-z-]+\.js$/, /^\.\.\/react\/index\.js$/, /^\.\.\/client\/index\.js$/, /^\.\.\/protocol\/index\.js$/];

function imports(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);
}

describe("the page's imports", () => {
  const dir = path.join(REPO_ROOT, "src/web");
  const files = fs.readdirSync(dir).filter((f) => /\.tsx?$/.test(f));

  it("finds the page's files", () => {
    expect(files).toContain("main.tsx");
  });

  it.each(files)("%s imports only the hook, the client, the protocol, React and its own files", (f) => {
    const bad = imports(path.join(dir, f)).filter((spec) => !ALLOWED.some((re) => re.test(spec)));
    expect(bad).toEqual([]);
  });

  it("the hook is built on the client and the protocol only", () => {
    const reactDir = path.join(REPO_ROOT, "src/react");
    for (const f of fs.readdirSync(reactDir)) {
      const bad = imports(path.join(reactDir, f)).filter((spec) => !/^(react|\.\/[a-z-]+\.js|\.\.\/(client|protocol)\/(index|types)\.js)$/.test(spec));
      expect(bad, f).toEqual([]);
    }
  });
});
