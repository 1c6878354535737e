/**
 * Every relative link in README.md and docs/ (and the benchmark history and the examples' READMEs
 * they link to) leads somewhere: the file (or folder) exists, and a
 * `#anchor` into a Markdown file names one of its headings (GitHub's slugs) or an `id` it sets.
 * A moved page or a renamed section fails here, not in a reader's browser.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process.js";

/** Markdown files under `dir` (relative to the repository), sorted. */
function markdownFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join(dir, f))
    .sort();
}

/** The lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((text, i) => {
    const open = /^\s*(```+|~~~+)/.exec(text);
    if (open) {
      if (!fence) fence = open[1];
      else if (text.trim().startsWith(fence)) fence = undefined;
      return;
    }
    if (!fence) out.push({ text, line: i + 1 });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/<[^>]+>/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown file offers: its headings' slugs (repeats numbered, as GitHub does) and explicit ids. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text } of proseLines(fs.readFileSync(file, "utf8"))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) {
      const base = slug(heading[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  }
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Relative links of a Markdown file, outside code blocks and code spans: `[x](t)`, `![x](t)`, `src="t"`, `href="t"`. */
function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const { text, line } of proseLines(fs.readFileSync(file, "utf8"))) {
    const prose = text.replace(/`[^`]*`/g, "``");
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...prose.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // http:, mailto:, …
      links.push({ file, line, target });
    }
  }
  return links;
}

/** README.md and docs/, and the pages they hand readers on to: the benchmark history, the examples' READMEs. */
const files = ["README.md", ...markdownFiles("docs"), "bench/results/history.md", "deploy/README.md", ...markdownFiles("examples").filter((f) => !f.includes("node_modules"))].map(
  (f) => path.join(REPO_ROOT, f),
);
const rel = (f: string) => path.relative(REPO_ROOT, f);

describe("links in README.md and docs/", () => {
  it("finds the pages and their links (the scan itself works)", () => {
    expect(files.map(rel)).toEqual(expect.arrayContaining(["README.md", "docs/reference/configuration.md", "docs/guides/your-graph.md"]));
    const all = files.flatMap(relativeLinks);
    expect(all.length).toBeGreaterThan(50);
    expect(all.some((l) => l.target.includes("#"))).toBe(true);
    expect(slug("Your own client: `tollgate/client`")).toBe("your-own-client-tollgateclient");
    expect(slug("Where a run's time goes")).toBe("where-a-runs-time-goes");
  });

  it("every relative link resolves, anchors included", () => {
    const broken: string[] = [];
    const cache = new Map<string, Set<string>>();
    for (const file of files) {
      for (const { line, target } of relativeLinks(file)) {
        const [rawPath, anchor] = target.split("#", 2) as [string, string | undefined];
        const to = rawPath ? path.resolve(path.dirname(file), decodeURIComponent(rawPath)) : file;
        const at = `${rel(file)}:${line} → ${target}`;
        if (!to.startsWith(REPO_ROOT + path.sep) && to !== REPO_ROOT) {
          broken.push(`${at} (outside the repository)`);
        } else if (!fs.existsSync(to)) {
          broken.push(`${at} (no such file)`);
        } else if (anchor && to.endsWith(".md")) {
          if (!cache.has(to)) cache.set(to, anchors(to));
          if (!cache.get(to)!.has(decodeURIComponent(anchor))) broken.push(`${at} (no such heading in ${rel(to)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
