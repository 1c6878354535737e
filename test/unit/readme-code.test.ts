/**
 * The README's code is code a team can copy: a block marked `<!-- file: PATH -->` is that file of
 * the repository, byte for byte (the server snippet is the example's server, the recipe for
 * testing your own tools is the example's test, and the package test installs and runs both),
 * and no block imports tollgate other than through the package's own entries.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process.js";

const README = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const CODE_LANGS = new Set(["js", "jsx", "ts", "tsx", "mjs", "javascript", "typescript"]);

interface Block {
  lang: string;
  code: string;
  /** The file a `<!-- file: PATH -->` line just above the fence says the block is. */
  file?: string;
  line: number;
}

/** The README's fenced blocks (indented ones too), each with the file marker right above it, if any. */
function blocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, lang] = open;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    expect(end, `the block opened on README line ${i + 1} is closed`).toBeGreaterThan(i);
    const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l));
    const marker = /^<!-- file: (\S+) -->$/.exec(lines[i - 1]?.trim() ?? "");
    found.push({ lang: lang!, code: `${code.join("\n")}\n`, file: marker?.[1], line: i + 1 });
    i = end;
  }
  return found;
}

/** Every module a block of JS/TS imports or re-exports, statically or not. */
function specifiers(code: string): string[] {
  const re = /\b(?:from|import|require)\s*\(?\s*["']([^"']+)["']/g;
  return [...code.matchAll(re)].map((m) => m[1]!);
}

const all = blocks(README);
const code = all.filter((b) => CODE_LANGS.has(b.lang));
const exportsMap = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> }).exports;
const entries = Object.keys(exportsMap).map((k) => (k === "." ? "tollgate" : `tollgate/${k.slice(2)}`));

describe("the README's code", () => {
  it("shows the example's server, tools and test as they are", () => {
    const marked = all.filter((b) => b.file);
    expect(marked.map((b) => b.file)).toEqual(
      expect.arrayContaining(["examples/payout-desk/server.js", "examples/payout-desk/tools.js", "examples/payout-desk/test/payout.test.js"]),
    );
    for (const b of marked) {
      expect(b.code, `README line ${b.line} is ${b.file}`).toBe(fs.readFileSync(path.join(REPO_ROOT, b.file!), "utf8"));
    }
  });

  it("imports tollgate only through the package's entries, never its source", () => {
    expect(code.length).toBeGreaterThan(0);
    const refused: string[] = [];
    for (const b of code) {
      for (const spec of specifiers(b.code)) {
        const at = `README line ${b.line}: ${spec}`;
        if (spec === "tollgate" || spec.startsWith("tollgate/")) {
          if (!entries.includes(spec)) refused.push(`${at} (not one of the package's exports)`);
        } else if (spec.startsWith(".") || spec.startsWith("/")) {
          // A project's own file is fine in that project's file; a path anywhere else reaches into
          // this checkout, which no installed project has.
          const project = b.file && /^examples\/[^/]+\//.exec(b.file)?.[0];
          const target = b.file && path.resolve(REPO_ROOT, path.dirname(b.file), spec);
          const own = project && target && target.startsWith(path.join(REPO_ROOT, project)) && fs.existsSync(target);
          if (!own) refused.push(`${at} (a path, not a package)`);
        }
      }
    }
    expect(refused).toEqual([]);
  });
});
