/**
 * The docs' code is code a team can copy. In README.md and every page under docs/:
 * - a block marked `<!-- file: PATH -->` is that file of the repository, byte for byte (the
 *   example's server, tools and test; the package test installs and runs them);
 * - a block marked `<!-- typecheck -->` type-checks, strict, against the package's own entries
 *   (`tollgate`, `tollgate/client`, … mapped to their sources);
 * - a command block marked `<!-- NAME:start -->` … `<!-- NAME:end -->` is one that
 *   test/e2e/readme-walkthrough.test.ts runs against a real server;
 * - every `npm run X` names a script of package.json, and every file a shell block hands to
 *   `tsx` exists;
 * - no block imports tollgate other than through the package's own entries.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process.js";

const CODE_LANGS = new Set(["js", "jsx", "ts", "tsx", "mjs", "javascript", "typescript"]);
const SHELL_LANGS = new Set(["bash", "sh", "shell", "console"]);

interface Block {
  /** The page, relative to the repository. */
  page: string;
  lang: string;
  code: string;
  /** The file a `<!-- file: PATH -->` line just above the fence says the block is. */
  file?: string;
  /** `<!-- typecheck -->` just above the fence. */
  typecheck: boolean;
  /** NAME of a `<!-- NAME:start -->` just above the fence. */
  command?: string;
  line: number;
}

/** Markdown files under `dir` (relative to the repository), sorted. */
function markdownFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join(dir, f))
    .sort();
}

/** A page's fenced blocks (indented ones too), each with the marker right above it, if any. */
function blocks(page: string): Block[] {
  const lines = fs.readFileSync(path.join(REPO_ROOT, page), "utf8").split("\n");
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, lang] = open;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    expect(end, `the block opened on ${page}:${i + 1} is closed`).toBeGreaterThan(i);
    const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l));
    let above = i - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const marker = lines[above]?.trim() ?? "";
    found.push({
      page,
      lang: lang!,
      code: `${code.join("\n")}\n`,
      file: /^<!-- file: (\S+) -->$/.exec(marker)?.[1],
      typecheck: marker === "<!-- typecheck -->",
      command: /^<!-- ([\w-]+):start -->$/.exec(marker)?.[1],
      line: i + 1,
    });
    i = end;
  }
  return found;
}

/** Every module a block of JS/TS imports or re-exports, statically or not. */
function specifiers(code: string): string[] {
  const re = /\b(?:from|import|require)\s*\(?\s*["']([^"']+)["']/g;
  return [...code.matchAll(re)].map((m) => m[1]!);
}

const pages = ["README.md", ...markdownFiles("docs")];
const all = pages.flatMap(blocks);
const code = all.filter((b) => CODE_LANGS.has(b.lang));
const at = (b: Block) => `${b.page}:${b.line}`;
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  exports: Record<string, string | { types?: string }>;
  scripts: Record<string, string>;
};
const entries = Object.keys(pkg.exports).map((k) => (k === "." ? "tollgate" : `tollgate/${k.slice(2)}`));

/** Each entry of the package, mapped to the source its declarations are built from. */
function entrySources(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(pkg.exports)) {
    const types = typeof value === "object" ? value.types : undefined;
    if (!types) continue;
    const source = types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts");
    paths[key === "." ? "tollgate" : `tollgate/${key.slice(2)}`] = [path.join(REPO_ROOT, source)];
  }
  return paths;
}

/** Type-checks the blocks as modules at the repository's root; the errors, each with where its block is. */
function typeCheck(checked: Block[]): string[] {
  const configFile = ts.readConfigFile(path.join(REPO_ROOT, "tsconfig.json"), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, REPO_ROOT);
  Object.assign(options, { allowJs: true, checkJs: true, noEmit: true, paths: entrySources() });
  const ext: Record<string, string> = { javascript: "js", typescript: "ts" };
  const files = new Map(checked.map((b, i) => [path.join(REPO_ROOT, `__docs_block_${i}.${ext[b.lang] ?? b.lang}`), b]));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f)?.code ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) =>
    files.has(f) ? ts.createSourceFile(f, files.get(f)!.code, language) : getSourceFile.call(host, f, language, ...rest);
  const program = ts.createProgram([...files.keys()], options, host);
  const errors: string[] = [];
  for (const [file, b] of files) {
    const source = program.getSourceFile(file)!;
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line + 1;
      errors.push(`${b.page}:${b.line + line}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    }
  }
  return errors;
}

/** The command blocks test/e2e/readme-walkthrough.test.ts runs: its `COMMAND_BLOCKS`, name → page. */
function commandsRun(): Record<string, string> {
  const source = fs.readFileSync(path.join(REPO_ROOT, "test/e2e/readme-walkthrough.test.ts"), "utf8");
  const list = /const COMMAND_BLOCKS = \{([^}]*)\}/.exec(source)?.[1] ?? "";
  return Object.fromEntries([...list.matchAll(/"?([\w-]+)"?:\s*"([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe("the docs' code", () => {
  it("finds the marked blocks (the scan itself works)", () => {
    expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/guides/your-tools.md", "docs/guides/approval-policies.md"]));
    expect(all.filter((b) => b.typecheck).map((b) => b.page)).toEqual(expect.arrayContaining(["README.md", "docs/guides/frontends.md"]));
    expect(all.filter((b) => b.command).map((b) => b.command)).toEqual(expect.arrayContaining(["walkthrough", "four-eyes"]));
    expect(commandsRun()).toMatchObject({ walkthrough: "README.md" });
  });

  it("shows the example's server, tools and test as they are", () => {
    const marked = all.filter((b) => b.file);
    expect(marked.map((b) => b.file)).toEqual(
      expect.arrayContaining(["examples/payout-desk/server.js", "examples/payout-desk/tools.js", "examples/payout-desk/test/payout.test.js"]),
    );
    for (const b of marked) {
      expect(fs.existsSync(path.join(REPO_ROOT, b.file!)), `${at(b)} names ${b.file}, which does not exist`).toBe(true);
      expect(b.code, `${at(b)} is ${b.file}`).toBe(fs.readFileSync(path.join(REPO_ROOT, b.file!), "utf8"));
    }
  });

  it("type-checks every block marked `<!-- typecheck -->`", { timeout: 120_000 }, () => {
    const checked = all.filter((b) => b.typecheck);
    for (const b of checked) expect(CODE_LANGS.has(b.lang), `${at(b)} is marked typecheck but is ${b.lang || "no language"}`).toBe(true);
    // A block that does not type-check is caught (the check itself works), and named by its page and line.
    const wrong: Block = { page: "(a wrong block)", lang: "ts", code: 'import { defineTool } from "tollgate";\nconst n: number = defineTool;\n', typecheck: true, line: 10 };
    const errors = typeCheck([...checked, wrong]);
    expect(errors.filter((e) => e.startsWith("(a wrong block):12:"))).toHaveLength(1);
    expect(errors.filter((e) => !e.startsWith("(a wrong block)"))).toEqual([]);
  });

  it("runs every marked command block (test/e2e/readme-walkthrough.test.ts), on the page it names", () => {
    const run = commandsRun();
    for (const b of all.filter((x) => x.command)) {
      expect(SHELL_LANGS.has(b.lang), `${at(b)}: the command block ${b.command} is a shell block`).toBe(true);
      expect(run[b.command!], `${at(b)}: no test runs the command block ${b.command}`).toBe(b.page);
    }
    for (const [name, page] of Object.entries(run)) {
      expect(all.some((b) => b.command === name && b.page === page), `${page} has the command block ${name}`).toBe(true);
    }
  });

  it("names only scripts that exist: `npm run X` in package.json, files handed to tsx", () => {
    const missing: string[] = [];
    const shell = all.filter((b) => SHELL_LANGS.has(b.lang));
    const spans = pages.flatMap((page) =>
      fs
        .readFileSync(path.join(REPO_ROOT, page), "utf8")
        .split("\n")
        .flatMap((text, i) => [...text.matchAll(/`([^`]+)`/g)].map((m) => ({ page, line: i + 1, code: m[1]! }))),
    );
    for (const { page, line, code: text } of [...shell, ...spans]) {
      for (const m of text.matchAll(/\bnpm run ([\w:.-]+)/g)) if (!pkg.scripts[m[1]!]) missing.push(`${page}:${line}: npm run ${m[1]}`);
      for (const m of text.matchAll(/\btsx ((?:scripts|bench|src|graphs|test)\/[\w./-]+\.ts)\b/g)) {
        if (!fs.existsSync(path.join(REPO_ROOT, m[1]!))) missing.push(`${page}:${line}: ${m[1]}`);
      }
    }
    expect(shell.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it("imports tollgate only through the package's entries, never its source", () => {
    expect(code.length).toBeGreaterThan(0);
    const refused: string[] = [];
    for (const b of code) {
      for (const spec of specifiers(b.code)) {
        const where = `${at(b)}: ${spec}`;
        if (spec === "tollgate" || spec.startsWith("tollgate/")) {
          if (!entries.includes(spec)) refused.push(`${where} (not one of the package's exports)`);
        } else if (spec.startsWith(".") || spec.startsWith("/")) {
          // A project's own file is fine in that project's file; a path anywhere else reaches into
          // this checkout, which no installed project has.
          const project = b.file && /^examples\/[^/]+\//.exec(b.file)?.[0];
          const target = b.file && path.resolve(REPO_ROOT, path.dirname(b.file), spec);
          const own = project && target && target.startsWith(path.join(REPO_ROOT, project)) && fs.existsSync(target);
          if (!own) refused.push(`${where} (a path, not a package)`);
        }
      }
    }
    expect(refused).toEqual([]);
  });
});
