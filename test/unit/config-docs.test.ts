/**
 * The configuration a user reads is the one the server parses: every variable `src/config.ts`
 * reads is in `.env.example` and in the README's Configuration table, and neither names one the
 * server does not read (a renamed variable left behind in the docs would be silently ignored).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../../src/config.js";
import { REPO_ROOT } from "../helpers/server-process.js";

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), "utf8");

/** The README's `## Configuration` section, up to the next section. */
function configSection(): string {
  const readme = read("README.md");
  const start = readme.indexOf("\n## Configuration\n");
  expect(start, "the README has a Configuration section").toBeGreaterThan(-1);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** `NAME=` lines of .env.example, set or commented out. */
const exampleVariables = () => [...read(".env.example").matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

/** Variables named in the first column of the Configuration table (one row may name several). */
const tableVariables = () =>
  configSection()
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .flatMap((l) => [...l.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));

describe("configuration docs", () => {
  it("reads the variables from the schema (the scan itself works)", () => {
    expect(CONFIG_VARIABLES).toContain("PORT");
    expect(CONFIG_VARIABLES).toContain("WEBHOOK_RETENTION_HOURS");
    expect(tableVariables()).toContain("PORT");
    expect(exampleVariables()).toContain("PORT");
  });

  it("every variable the server reads is in .env.example and the README's table, and nothing else is", () => {
    const known = [...CONFIG_VARIABLES].sort();
    expect([...new Set(exampleVariables())].sort()).toEqual(known);
    expect([...new Set(tableVariables())].sort()).toEqual(known);
  });
});
