/**
 * The configuration a user reads is the one the server parses. docs/reference/configuration.md is
 * generated from the schema in `src/config.ts` (`npm run docs:config`) and must be checked in as
 * generated; every variable the server reads has a meaning there and is in `.env.example`, and
 * neither names one the server does not read (a renamed variable left behind in the docs would be
 * silently ignored).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_DOCS_FILE, configDocsText, configVariables } from "../../scripts/config-docs.js";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";
import { REPO_ROOT } from "../helpers/server-process.js";

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), "utf8");

/** `NAME=` lines of .env.example, set or commented out. */
const exampleVariables = () => [...read(".env.example").matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

/** Variables named in the first column of the checked-in reference's table. */
const tableVariables = () =>
  fs
    .readFileSync(CONFIG_DOCS_FILE, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .flatMap((l) => [...l.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));

describe("configuration docs", () => {
  it("reads the variables from the schema (the scan itself works)", () => {
    expect(CONFIG_VARIABLES).toContain("PORT");
    expect(CONFIG_VARIABLES).toContain("WEBHOOK_RETENTION_HOURS");
    expect(tableVariables()).toContain("PORT");
    expect(exampleVariables()).toContain("PORT");
    const port = configVariables().find((v) => v.name === "PORT");
    expect(port).toMatchObject({ default: "`8787`", meaning: expect.stringContaining("listen port") });
  });

  it("is checked in as docs/reference/configuration.md exactly as the schema generates it (run `npm run docs:config`)", () => {
    expect(path.relative(REPO_ROOT, CONFIG_DOCS_FILE)).toBe(path.join("docs", "reference", "configuration.md"));
    expect(fs.readFileSync(CONFIG_DOCS_FILE, "utf8")).toBe(configDocsText());
  });

  it("gives every variable the server reads a meaning, and a default that matches what the server parses", () => {
    const rows = configVariables();
    expect(rows.map((r) => r.name).sort()).toEqual([...CONFIG_VARIABLES].sort());
    expect(rows.filter((r) => r.meaning.trim().length < 10).map((r) => r.name)).toEqual([]);
    expect(rows.filter((r) => !r.default.trim()).map((r) => r.name)).toEqual([]);
    // A declared default is what an empty environment parses to (spot checks across kinds).
    const config = loadConfig({});
    const defaultOf = (name: string) => rows.find((r) => r.name === name)!.default;
    expect(defaultOf("PORT")).toBe(`\`${config.port}\``);
    expect(defaultOf("HOST")).toBe(`\`${config.host}\``);
    expect(defaultOf("LOG_LEVEL")).toBe(`\`${config.logLevel}\``);
    expect(defaultOf("APPROVAL_TTL_SECONDS")).toBe(`\`${config.approvalTtlMs / 1000}\``);
    expect(defaultOf("MODEL")).toContain(`\`${config.model}\``);
  });

  it("every variable the server reads is in .env.example and the reference's table, and nothing else is", () => {
    const known = [...CONFIG_VARIABLES].sort();
    expect([...new Set(exampleVariables())].sort()).toEqual(known);
    expect([...new Set(tableVariables())].sort()).toEqual(known);
  });
});
