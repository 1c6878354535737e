/**
 * Every refusal a person or a client reads, and every text the model reads about how a call ended,
 * is worded once, in src/protocol's catalogue (refusals.ts, outcomes.ts): the same situation
 * reads the same on every face. The scan reads src/ with TypeScript's parser, so comments and
 * docs do not count and a text cannot hide behind a local constant.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { closingOutcomes, DEFAULT_REASON, EDITED_PREFIX, outcomeText, refusals } from "../../../src/protocol/index.js";
import { REPO_ROOT } from "../../helpers/server-process.js";

const REFUSALS_FILE = "src/protocol/refusals.ts";
const OUTCOMES_FILE = "src/protocol/outcomes.ts";
/** `AppError` and its one builder (`threadNotFound`, which the catalogue hands out) live here. */
const ERRORS_FILE = "src/protocol/errors.ts";

/** What the model reads about a call that ended without running as asked: the words that give it away. */
const OUTCOME_WORDS = /not executed|^Rejected: |^Expired: |^Cancelled: |Approved with edits:|^outcome unknown$|^User denied$|^no decision$|^malformed tool call$/;

function sourceFiles(dir = "src"): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(rel);
  }
  return out.sort();
}

const parse = (file: string, text = fs.readFileSync(path.join(REPO_ROOT, file), "utf8")) =>
  ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);

/** Constants of the file bound to a text: `const NOT_VALID = "…"`. */
function wordedConstants(source: ts.SourceFile): Map<string, ts.Expression> {
  const out = new Map<string, ts.Expression>();
  const visit = (n: ts.Node) => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) out.set(n.name.text, n.initializer);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

/** Whether an expression is a text written here: a literal, a template, or built from one. */
function worded(e: ts.Expression, constants: Map<string, ts.Expression>, seen = new Set<string>()): boolean {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isTemplateExpression(e)) return true;
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return worded(e.expression, constants, seen);
  if (ts.isBinaryExpression(e)) return worded(e.left, constants, seen) || worded(e.right, constants, seen);
  if (ts.isConditionalExpression(e)) return worded(e.whenTrue, constants, seen) || worded(e.whenFalse, constants, seen);
  if (ts.isIdentifier(e) && !seen.has(e.text)) {
    const init = constants.get(e.text);
    seen.add(e.text);
    return !!init && worded(init, constants, seen);
  }
  return false;
}

/** `new AppError(code, message)` calls whose message is worded in the file itself. */
function refusalsWordedIn(file: string, text?: string): string[] {
  const source = parse(file, text);
  const constants = wordedConstants(source);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "AppError") {
      const message = n.arguments?.[1];
      if (message && worded(message, constants)) out.push(`${file}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${n.getText().slice(0, 100)}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

/** String literals and template heads of the file that read like an outcome text. */
function outcomesWordedIn(file: string, text?: string): string[] {
  const source = parse(file, text);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    const t = ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) ? n.text : ts.isTemplateExpression(n) ? n.head.text + n.templateSpans.map((s) => s.literal.text).join("…") : undefined;
    if (t !== undefined && OUTCOME_WORDS.test(t) && !ts.isImportDeclaration(n.parent)) out.push(`${file}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${t.slice(0, 80)}`);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

const files = sourceFiles();

describe("one catalogue of refusal texts", () => {
  it("sees a text however it is written: literal, template, concatenation, fallback, a constant of the file", () => {
    const probe = "src/runs/probe.ts";
    const found = refusalsWordedIn(
      probe,
      [
        'const NOPE = "nope";',
        'new AppError("forbidden", "plain");',
        "new AppError(\"forbidden\", `tpl ${x}`);",
        'new AppError("forbidden", "a" + b);',
        'new AppError("forbidden", m ?? NOPE);',
        'new AppError("forbidden", ok ? m : "else");',
        "new AppError(\"forbidden\", formatIssues(issues));",
        "new AppError(\"forbidden\", detail);",
        "refusals.threadBusy();",
      ].join("\n"),
    ).map((l) => l.split(": ")[0]);
    expect(found).toEqual(["src/runs/probe.ts:2", "src/runs/probe.ts:3", "src/runs/probe.ts:4", "src/runs/probe.ts:5", "src/runs/probe.ts:6"]);
  });

  it("no file outside the catalogue words a refusal (AppError with a text of its own)", () => {
    const bad = files.filter((f) => f !== REFUSALS_FILE && f !== ERRORS_FILE).flatMap((f) => refusalsWordedIn(f));
    expect(bad).toEqual([]);
  });

  it("one message per situation: a refusal reads the same whichever face gives it", () => {
    expect(refusals.threadBusy().message).toBe("A run is already in flight on this thread");
    expect(refusals.racing()).toMatchObject({ code: "thread_busy", message: "Other decisions on this interrupt keep landing at the same time; try again" });
    expect(refusals.threadNotFound("t1")).toMatchObject({ code: "thread_not_found", message: "Thread t1 not found" });
    expect(refusals.unknownCall("x".repeat(300)).message).toBe(`Call ${"x".repeat(200)}… is not pending in this interrupt`);
  });

  it("a refusal two faces give is one builder: the body limit, a thread's graph, the one strategy served", () => {
    expect(refusals.bodyTooLarge()).toMatchObject({ code: "invalid_request", message: "Request body is too large" });
    expect(refusals.graphMismatch("agent")).toMatchObject({ code: "graph_mismatch", message: "This thread runs graph 'agent'; a thread keeps its graph for life" });
    expect(refusals.onlyRejectStrategy("multitaskStrategy").message).toBe("Only multitaskStrategy 'reject' is supported: one run at a time per thread");
    expect(refusals.notShownWhole()).toMatchObject({
      code: "forbidden",
      message: "This request is too long to show whole in Slack, so it can be approved only on the page, where every call is shown whole",
    });
  });
});

describe("one catalogue of outcome texts", () => {
  it("no file outside the catalogue words what the model reads of a call's end", () => {
    const bad = files.filter((f) => f !== OUTCOMES_FILE).flatMap((f) => outcomesWordedIn(f));
    expect(bad).toEqual([]);
  });

  it("the contract's sentences, as the model reads them", () => {
    expect(outcomeText(closingOutcomes.rejected(DEFAULT_REASON))).toBe("Rejected: User denied");
    expect(outcomeText(closingOutcomes.expired())).toBe("Expired: approval window closed; not executed");
    expect(outcomeText(closingOutcomes.cancelled())).toBe("Cancelled: not executed");
    expect(outcomeText(closingOutcomes.claimLost())).toBe("Error: not executed: the run could not start");
    expect(outcomeText({ status: "ok", output: "refunded", edited: ["cents"] })).toBe(`${EDITED_PREFIX} cents\nrefunded`);
  });
});
