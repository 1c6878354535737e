/**
 * The layers are one-way: every import in src/ and graphs/ points from a higher layer to a lower
 * one (or stays inside its own folder), the browser side never reaches the server side, and no
 * two files import each other round a circle. The table below is the design; a new folder fails
 * this test until it is given a place in it.
 */
import fs from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process.js";

type Side = "shared" | "browser" | "server";

/**
 * Folder (or file) → rank and side. An import must go to a strictly lower rank: a sideways import
 * between two folders of one rank is refused too, so each pair is ordered on purpose. The most
 * specific entry wins (graphs/studio.ts over graphs).
 */
const LAYERS: Record<string, { rank: number; side: Side }> = {
  "src/lib": { rank: 0, side: "shared" }, // dependency-free helpers (abortable sleep)
  "src/protocol": { rank: 1, side: "shared" }, // the events, error codes, SSE framing: the keel
  // The browser side: the client, the React hook on it, the page on both.
  "src/client": { rank: 2, side: "browser" },
  "src/react": { rank: 3, side: "browser" },
  "src/web": { rank: 4, side: "browser" },
  // The server side.
  "src/logger.ts": { rank: 2, side: "server" },
  "src/clock.ts": { rank: 2, side: "server" }, // where "now" comes from: stores, runs and ops stamp with it
  // the one home of the approval rules, below tools (whose permit it defines), every face and the
  // run engine: pure, it imports src/protocol and src/lib only; storage and identity are passed in
  "src/gate": { rank: 2.5, side: "server" },
  "src/model": { rank: 3, side: "server" },
  "src/tools": { rank: 3, side: "server" },
  "src/auth": { rank: 3, side: "server" },
  "src/ledger": { rank: 4, side: "server" }, // the execution ledger's contract: graphs use it, stores implement it
  "src/config.ts": { rank: 4, side: "server" },
  "src/store": { rank: 5, side: "server" },
  // any graph seen from the engine (loading, ids, the gate kit): above the stores, whose row types
  // it may read, and below graphs/ and runs, which build on it; 5.5 so no rank below moves
  "src/graph": { rank: 5.5, side: "server" },
  // The built-in agent, one graph among others: beside the run engine, which reaches graphs only through src/graph.
  "graphs": { rank: 7, side: "server" },
  "src/ops": { rank: 6, side: "server" }, // metrics, logs, tracing, webhook delivery: above the stores (the outbox), used by runs and the server
  "src/runs": { rank: 7, side: "server" },
  // the HTTP kit every face shares (validation, principal, thread param, SSE, OpenAPI types): below the faces
  "src/http": { rank: 7.5, side: "server" },
  // The faces, one rank so none imports another (what two need lives in src/http, src/gate or
  // src/runs): each parses its shape, calls the engine's one door and renders the answer.
  "src/faces/api": { rank: 8.5, side: "server" }, // tollgate's own API, the page's routes and the app that mounts the faces
  "src/faces/langgraph": { rank: 8.5, side: "server" }, // LangGraph's run-centric and thread-centric APIs at /langgraph
  "src/faces/slack": { rank: 8.5, side: "server" },
  "src/faces/email": { rank: 8.5, side: "server" },
  "src/tollgate.ts": { rank: 9, side: "server" },
  "src/serve.ts": { rank: 10, side: "server" }, // a Tollgate on a socket, with signal handling
  "src/command.ts": { rank: 10.5, side: "server" }, // the command's work for what it is handed: config, socket, exit codes
  // Entry files: nothing imports them.
  "graphs/studio.ts": { rank: 11, side: "server" }, // LangGraph Studio's graphs (langgraph.json)
  "graphs/studio-team-kit.ts": { rank: 11, side: "server" },
  "graphs/studio-team-hitl.ts": { rank: 11, side: "server" },
  "src/main.ts": { rank: 11, side: "server" }, // the `tollgate` command
  "src/index.ts": { rank: 11, side: "server" }, // the package's server API (`import … from "tollgate"`)
  "src/testing": { rank: 11, side: "server" }, // the package's test kit (`tollgate/testing`)
};

/**
 * Arrows the ranks allow but the design still forbids: the server goes through runs, not to the
 * stores ("stores return results, runs decides, the server maps"), and stores speak no wire error
 * codes (nothing that src/protocol/errors.ts exports, whichever file they import it through).
 */
const NOT_DOWN_TO: { from: string; to: string; why: string }[] = [
  { from: "src/faces", to: "src/store", why: "a face reaches stores only through runs (the channels' outbox lanes through ops)" },
  { from: "src/tollgate.ts", to: "graphs", why: "the engine serves the agent it is handed: only entry files hand in the built-in one" },
  { from: "src/gate", to: "src/logger.ts", why: "the gate is pure: it imports src/protocol and src/lib only" },
  { from: "src/gate", to: "src/clock.ts", why: "the gate is pure: time is passed in as `now`" },
];

/** Folders reached from outside only through their index: one front door each. */
const FRONT_DOORS = ["src/http", "src/gate"];
const WIRE_ERRORS_FILE = "src/protocol/errors.ts";
const NO_WIRE_ERRORS_IN = ["src/store"];

/**
 * Forbidden arrows that exist until the other issue-17 changes land, each with who removes it.
 * Delete an entry once its arrow is gone: the test fails on an exception that matches nothing,
 * so the list cannot go stale.
 */
const KNOWN_EXCEPTIONS: { from: string; to: string; why: string }[] = [];

const SOURCE_DIRS = ["src", "graphs"];

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(rel);
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return out.sort();
}

/**
 * One import of a repository file: where it points, whether only types cross, which names ("*":
 * all of them, through a namespace import or a star re-export), and whether it re-exports them.
 */
interface Arrow {
  to: string;
  typeOnly: boolean;
  names: string[];
  reexport: boolean;
}

/** Every module specifier a file names, packages and builtins included. */
function specifiersOf(file: string): string[] {
  return ts.preProcessFile(fs.readFileSync(path.join(REPO_ROOT, file), "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

/**
 * The repository files a file imports: static, dynamic, type-only, `import("…").T` type queries,
 * namespace imports and re-exports alike. `text` is the file's source (a test may pass its own).
 */
function importsOf(file: string, text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8")): Arrow[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: Arrow[] = [];
  const add = (spec: string, typeOnly: boolean, names: string[], reexport = false) => {
    if (!spec.startsWith(".")) return; // packages and node: builtins are not layers
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const candidates = [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base];
    const to = candidates.find((c) => fs.existsSync(path.join(REPO_ROOT, c)) && fs.statSync(path.join(REPO_ROOT, c)).isFile());
    if (!to) throw new Error(`${file}: cannot resolve import "${spec}"`);
    out.push({ to, typeOnly, names, reexport });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named?.length && named.every((e) => e.isTypeOnly)));
      const star = clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings) ? ["*"] : [];
      const names = [...(clause?.name ? ["default"] : []), ...star, ...(named ?? []).map((e) => (e.propertyName ?? e.name).text)];
      add(node.moduleSpecifier.text, typeOnly, names);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      const typeOnly = node.isTypeOnly || (!!named?.length && named.every((e) => e.isTypeOnly));
      // No clause (`export * from`) or `export * as ns from`: everything the target exports.
      const names = named ? named.map((e) => (e.propertyName ?? e.name).text) : ["*"];
      add(node.moduleSpecifier.text, typeOnly, names, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      // `import("./x.js").T` in a type: the leftmost name of the qualifier is what it takes.
      let q = node.qualifier;
      while (q && ts.isQualifiedName(q)) q = q.left;
      add(node.argument.literal.text, true, q ? [q.text] : ["*"]);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      // What a dynamic import takes is decided at run time: all of it, as far as the rules go.
      if (arg && ts.isStringLiteral(arg)) add(arg.text, false, ["*"]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function layerOf(file: string): string | undefined {
  return Object.keys(LAYERS)
    .filter((k) => file === k || file.startsWith(`${k}/`))
    .sort((a, b) => b.length - a.length)[0];
}

const files = sourceFiles();
type Graph = Map<string, Arrow[]>;
const graph: Graph = new Map(files.map((f) => [f, importsOf(f)]));

/** What src/protocol/errors.ts exports: the wire error codes and their builders. */
const wireErrorNames = (() => {
  const text = fs.readFileSync(path.join(REPO_ROOT, WIRE_ERRORS_FILE), "utf8");
  const source = ts.createSourceFile(WIRE_ERRORS_FILE, text, ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  source.forEachChild((n) => {
    const exported = ts.canHaveModifiers(n) && ts.getModifiers(n)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) return;
    if (ts.isVariableStatement(n)) for (const d of n.declarationList.declarations) names.add(d.name.getText());
    else if ("name" in n && n.name && ts.isIdentifier(n.name as ts.Node)) names.add((n.name as ts.Identifier).text);
  });
  return names;
})();

const under = (file: string, folder: string) => file === folder || file.startsWith(`${folder}/`);

/** Whether importing everything of `file` brings the wire error codes: it is their file, or re-exports it. */
function exposesWire(g: Graph, file: string, seen = new Set<string>()): boolean {
  if (file === WIRE_ERRORS_FILE) return true;
  if (seen.has(file)) return false;
  seen.add(file);
  return (g.get(file) ?? []).some(
    (a) => a.reexport && (a.names.includes("*") || a.names.some((n) => wireErrorNames.has(n))) && exposesWire(g, a.to, seen),
  );
}

/** The wire error names an arrow brings in from a file that exposes them: by name, or all of them through "*". */
function wireNamesOf(g: Graph, a: Arrow): string[] {
  if (!exposesWire(g, a.to)) return [];
  return a.names.flatMap((n) => (n === "*" ? ["* (every wire error code)"] : wireErrorNames.has(n) ? [n] : []));
}

/** Every arrow that the table and the rules above do not allow. */
function forbiddenArrows(g: Graph = graph): { from: string; to: string; rule: string }[] {
  const bad: { from: string; to: string; rule: string }[] = [];
  for (const [from, arrows] of g) {
    const a = layerOf(from)!;
    for (const arrow of arrows) {
      const { to } = arrow;
      const b = layerOf(to);
      if (!b) continue; // reported by the "every file has a layer" test
      if (NO_WIRE_ERRORS_IN.some((d) => under(from, d))) {
        const wire = wireNamesOf(g, arrow);
        if (wire.length) bad.push({ from, to: WIRE_ERRORS_FILE, rule: `${a} must not use wire error codes (${wire.join(", ")})` });
      }
      if (a === b) continue;
      const door = FRONT_DOORS.find((d) => under(to, d) && !under(from, d));
      if (door && to !== `${door}/index.ts`) bad.push({ from, to, rule: `${door} is reached only through ${door}/index.ts` });
      const [la, lb] = [LAYERS[a]!, LAYERS[b]!];
      const skip = NOT_DOWN_TO.find((r) => under(from, r.from) && under(to, r.to));
      if (la.side !== "shared" && lb.side !== "shared" && la.side !== lb.side) {
        bad.push({ from, to, rule: `${a} (${la.side}) must not import ${b} (${lb.side})` });
      } else if (lb.rank >= la.rank) {
        bad.push({ from, to, rule: `${a} (rank ${la.rank}) must not import ${b} (rank ${lb.rank})` });
      } else if (skip) {
        bad.push({ from, to, rule: `${skip.from} must not import ${skip.to}: ${skip.why}` });
      }
    }
  }
  return bad;
}

/** The import cycles among files, each found once, as the files round it. */
function cycles(edges: (a: Arrow) => boolean): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const { to } of (graph.get(f) ?? []).filter(edges)) {
      if (state.get(to) === "open") found.push(stack.slice(stack.indexOf(to)));
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return found;
}

const isKnown = (a: { from: string; to: string }) => KNOWN_EXCEPTIONS.some((k) => k.from === a.from && k.to === a.to);

describe("one-way layers", () => {
  it("finds the source files and their imports (the scan itself works)", () => {
    const targets = (f: string) => (graph.get(f) ?? []).map((a) => a.to);
    expect(files).toContain("graphs/agent.ts");
    expect(files).toContain("src/web/app.tsx");
    expect(targets("src/main.ts")).toContain("graphs/served-agent.ts");
    // type-only imports count as arrows: a type is a dependency too
    expect(graph.get("src/store/types.ts")).toContainEqual({ to: "src/ledger/index.ts", typeOnly: true, names: ["ExecutionLedger"], reexport: false });
    expect(wireErrorNames).toContain("AppError");
  });

  it("sees every form an import takes (type queries, namespaces, star re-exports), and the rules see through them", () => {
    const probe = "src/store/probe.ts";
    const arrows = importsOf(
      probe,
      [
        'type Code = import("../protocol/errors.js").AppError["code"];',
        'import * as P from "../protocol/index.js";',
        'export * from "../ledger/index.js";',
        'export * as Sse from "../protocol/sse.js";',
        'let s: typeof import("../runs/run-service.js").RunService;',
        'const late = () => import("../protocol/index.js");',
      ].join("\n"),
    );
    expect(arrows).toEqual([
      { to: "src/protocol/errors.ts", typeOnly: true, names: ["AppError"], reexport: false },
      { to: "src/protocol/index.ts", typeOnly: false, names: ["*"], reexport: false },
      { to: "src/ledger/index.ts", typeOnly: false, names: ["*"], reexport: true },
      { to: "src/protocol/sse.ts", typeOnly: false, names: ["*"], reexport: true },
      { to: "src/runs/run-service.ts", typeOnly: true, names: ["RunService"], reexport: false },
      { to: "src/protocol/index.ts", typeOnly: false, names: ["*"], reexport: false },
    ]);
    // A lower file outside src/protocol that passes the codes on by name (a real file, its
    // imports made up): the store taking them through it is seen too.
    const relay = "src/ledger/memory-ledger.ts";
    const relayed = importsOf(relay, 'export { AppError } from "../protocol/errors.js";');
    arrows.push(...importsOf(probe, 'import { AppError } from "../ledger/memory-ledger.js";'));
    const found = forbiddenArrows(new Map([...graph, [relay, relayed], [probe, arrows]]))
      .filter((a) => a.from === probe)
      .map((a) => `${a.to}: ${a.rule}`);
    expect(found).toEqual([
      "src/protocol/errors.ts: src/store must not use wire error codes (AppError)",
      // protocol/index.ts re-exports errors.ts: all of it comes along
      "src/protocol/errors.ts: src/store must not use wire error codes (* (every wire error code))",
      "src/runs/run-service.ts: src/store (rank 5) must not import src/runs (rank 7)",
      "src/protocol/errors.ts: src/store must not use wire error codes (* (every wire error code))",
      "src/protocol/errors.ts: src/store must not use wire error codes (AppError)",
    ]);
  });

  it("the gate and the HTTP kit are reached only through their index, and a face never imports another face", () => {
    const probe = "src/faces/langgraph/probe.ts";
    const g: Graph = new Map([
      [probe, importsOf(probe, ['import { checkVersions } from "../../gate/rules/versions.js";', 'import { parseBody } from "../../http/parse-body.js";', 'import { resumeBody } from "../api/schemas.js";', 'import { bindResume } from "../../gate/index.js";'].join("\n"))],
    ]);
    expect(forbiddenArrows(g).map((b) => [b.to, b.rule])).toEqual([
      ["src/gate/rules/versions.ts", "src/gate is reached only through src/gate/index.ts"],
      ["src/http/parse-body.ts", "src/http is reached only through src/http/index.ts"],
      // a face never imports another face: what both need lives in src/http, src/gate or src/runs
      ["src/faces/api/schemas.ts", "src/faces/langgraph (rank 8.5) must not import src/faces/api (rank 8.5)"],
    ]);
  });

  it("every file has a layer in the table", () => {
    expect(files.filter((f) => !layerOf(f))).toEqual([]);
  });

  it("no import points up, sideways, across from the browser side to the server side, or past runs", () => {
    const bad = forbiddenArrows().filter((a) => !isKnown(a));
    expect(bad.map((a) => `${a.from} → ${a.to}: ${a.rule}`)).toEqual([]);
  });

  it("every known exception still exists (remove it from the list once fixed)", () => {
    const all = forbiddenArrows();
    const stale = KNOWN_EXCEPTIONS.filter((k) => !all.some((a) => a.from === k.from && a.to === k.to));
    expect(stale).toEqual([]);
  });

  it("the browser side and what it shares with the server import no Node builtin", () => {
    const node = new Set(builtinModules);
    const browserish = files.filter((f) => LAYERS[layerOf(f)!]!.side !== "server");
    const bad = browserish.flatMap((f) => specifiersOf(f).filter((s) => s.startsWith("node:") || node.has(s)).map((s) => `${f}: ${s}`));
    expect(browserish).toContain("src/lib/abortable-sleep.ts");
    expect(bad).toEqual([]);
  });

  it("nothing imports an entry file: Studio's graph and the process entry stand alone", () => {
    const entries = ["graphs/studio.ts", "graphs/studio-team-kit.ts", "graphs/studio-team-hitl.ts", "src/main.ts", "src/index.ts", "src/testing/index.ts"];
    const importers = [...graph].filter(([, arrows]) => arrows.some((a) => entries.includes(a.to))).map(([f]) => f);
    expect(importers).toEqual([]);
  });

  it("no circle of imports at all, type-only ones included (graphs/agent.ts ↔ graphs/studio.ts and RunContext ↔ Settler were two)", () => {
    expect(cycles(() => true).map((c) => c.join(" → "))).toEqual([]);
  });
});
