/**
 * Named options over long positional parameter lists: no function, method, arrow function,
 * constructor or signature in src/ or graphs/ takes four or more parameters. A few leading
 * positional ones are fine when they are the obvious subject (`release(threadId, holderId, o)`),
 * as long as there are at most three in all; the rest go in an options object, each option named
 * at the call site. Only a signature a library dictates may break the rule, and it is listed below.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/server-process.js";

const MAX_PARAMETERS = 3;
const SOURCE_DIRS = ["src", "graphs"];

/**
 * Signatures whose shape a library fixes (a callback LangChain, LangGraph or Node calls with four
 * or more arguments), as `file name`, each with the library and why. Nothing else belongs here:
 * a function of our own takes an options object instead.
 */
const LIBRARY_FIXED: { at: string; why: string }[] = [];

/**
 * Functions whose change needs files that another change owns (the gate's `Deciders` interface
 * and its callers), as `file name`, each with what is left to do. Not an allow-list: the test
 * fails on an entry that matches nothing, so the list only shrinks.
 */
const AWAITING: { at: string; todo: string }[] = [];

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

/** A function-like node with too many parameters: where it is, what it is called, how many it takes. */
interface Offender {
  file: string;
  line: number;
  name: string;
  count: number;
}

/**
 * Everything that declares parameters: declarations and expressions, and signatures in types too
 * (an interface's `f(a, b, c, d)` or `f: (a, b, c, d) => void`), since implementations follow them.
 */
function isFunctionLike(n: ts.Node): n is ts.SignatureDeclaration {
  return (
    ts.isFunctionDeclaration(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isArrowFunction(n) ||
    ts.isFunctionExpression(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isMethodSignature(n) ||
    ts.isCallSignatureDeclaration(n) ||
    ts.isConstructSignatureDeclaration(n) ||
    ts.isFunctionTypeNode(n) ||
    ts.isConstructorTypeNode(n)
  );
}

/** The text of a declaration's name, when it has a plain one. */
function plainName(n: ts.Node): string | undefined {
  const name = (n as { name?: ts.Node }).name;
  return name && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) ? name.text : undefined;
}

/**
 * A readable name: `Class.method`, `Interface.method`, `Class.constructor`, a function's own
 * name, or the variable or property an arrow function is assigned to.
 */
function nameOf(n: ts.SignatureDeclaration): string {
  const own = ts.isConstructorDeclaration(n) ? "constructor" : plainName(n);
  const holder = n.parent;
  if (own && (ts.isClassLike(holder) || ts.isInterfaceDeclaration(holder))) return `${holder.name?.text ?? "<class>"}.${own}`;
  if (own) return own;
  // `const f = (…) => …`, `{ f: (…) => … }`, `f: (…) => void` in a type: the name it is given.
  const named = plainName(holder);
  if (named) return named;
  return "<anonymous>";
}

/** The parameters a caller passes: TypeScript's `this` parameter is a type annotation, not one of them. */
function parameterCount(n: ts.SignatureDeclaration): number {
  return n.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === "this")).length;
}

/** Every function-like node of `text` with more than MAX_PARAMETERS parameters. */
function offendersIn(file: string, text: string): Offender[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: Offender[] = [];
  const visit = (n: ts.Node) => {
    if (isFunctionLike(n) && parameterCount(n) > MAX_PARAMETERS) {
      const { line } = source.getLineAndCharacterOfPosition(n.getStart(source));
      out.push({ file, line: line + 1, name: nameOf(n), count: parameterCount(n) });
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

const files = sourceFiles();
const offenders = files.flatMap((f) => offendersIn(f, fs.readFileSync(path.join(REPO_ROOT, f), "utf8")));
const keyOf = (o: Offender) => `${o.file} ${o.name}`;
const excused = new Set([...LIBRARY_FIXED.map((e) => e.at), ...AWAITING.map((e) => e.at)]);

describe("named options over long positional parameter lists", () => {
  it("sees every kind of function, and counts what a caller passes (the scan itself works)", () => {
    const probe = [
      "export function four(a: number, b: number, c: number, d: number) {}",
      "const arrow = (a: 1, b: 2, c: 3, d: 4) => a;",
      "const expr = function (a: 1, b: 2, c: 3, d: 4) {};",
      "class Store {",
      "  constructor(a: 1, b: 2, c: 3, d: 4) {}",
      "  release(threadId: string, holderId: string, o: { to: string; outcome: string; interruptId?: string }) {}",
      "  method(a: 1, b: 2, c: 3, d?: 4) {}",
      "}",
      "interface Rules {",
      "  decide(a: 1, b: 2, c: 3, d: 4): boolean;",
      "  listener: (a: 1, b: 2, c: 3, d: 4) => void;",
      "}",
      "const handlers = { onEvent: (a: 1, b: 2, c: 3, d: 4) => {} };",
      "function withThis(this: Window, a: 1, b: 2, c: 3) {}",
      "export default function (a: 1, b: 2, c: 3, d: 4) {}",
    ].join("\n");
    expect(offendersIn("src/probe.ts", probe).map((o) => `${o.line} ${o.name} (${o.count})`)).toEqual([
      "1 four (4)",
      "2 arrow (4)",
      "3 expr (4)",
      "5 Store.constructor (4)",
      "7 Store.method (4)",
      "10 Rules.decide (4)",
      "11 listener (4)",
      "13 onEvent (4)",
      "15 <anonymous> (4)",
    ]);
    // And on the repository: files of both folders, .tsx included, are read.
    expect(files).toContain("graphs/agent.ts");
    expect(files).toContain("src/web/app.tsx");
  });

  it("no function in src/ or graphs/ takes more than three parameters", () => {
    const bad = offenders.filter((o) => !excused.has(keyOf(o)));
    expect(bad.map((o) => `${o.file}:${o.line} ${o.name} takes ${o.count} parameters: take an options object`)).toEqual([]);
  });

  it("every listed exception still matches a function (remove an entry once its function is fixed)", () => {
    const found = new Set(offenders.map(keyOf));
    expect([...excused].filter((at) => !found.has(at))).toEqual([]);
  });
});
