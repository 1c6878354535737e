import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseEvent } from "../../../src/client/parse-event.js";
import { ConfigError, loadConfig } from "../../../src/config.js";
import { formatIssues } from "../../../src/protocol/index.js";

const body = z.object({ message: z.string(), decisions: z.array(z.object({ call_id: z.string() })) });
const issuesOf = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value);
  if (r.success) throw new Error("expected a failure");
  return r.error.issues;
};

describe("formatIssues: one wording for every validation failure", () => {
  it("names each field by its dotted path, and an issue about the whole value by its message alone", () => {
    expect(formatIssues(issuesOf(body, { message: 1, decisions: [{ call_id: 2 }] }))).toBe(
      "message: Invalid input: expected string, received number; decisions.0.call_id: Invalid input: expected string, received number",
    );
    expect(formatIssues(issuesOf(body, "x"))).toBe("Invalid input: expected object, received string");
  });

  it("bounds what a request body's message echoes: three issues, clipped path segments", () => {
    const long = "k".repeat(100);
    const many = z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string(), [long]: z.string() });
    const text = formatIssues(issuesOf(many, {}), { max: 3, clip: 64 });
    expect(text.split("; ")).toHaveLength(3);
    const clipped = formatIssues(issuesOf(z.object({ [long]: z.string() }), {}), { max: 3, clip: 64 });
    expect(clipped).toBe(`${"k".repeat(64)}…: Invalid input: expected string, received undefined`);
  });

  it("names a configuration variable, never a path into its value (a token would be printed)", () => {
    let err: unknown;
    try {
      loadConfig({ AUTH_TOKENS: JSON.stringify({ "tok-secret-1": { sub: 5, roles: ["user"] } }) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^invalid configuration: AUTH_TOKENS: /);
    expect((err as Error).message).not.toContain("tok-secret-1");
    expect(formatIssues(issuesOf(z.string(), 1), { firstSegmentOnly: true, root: "environment" })).toBe(
      "environment: Invalid input: expected string, received number",
    );
  });

  it("labels a root issue in the client's event errors", () => {
    expect(() => parseEvent({ id: "r:0", event: "token", data: JSON.stringify({ run_id: "r" }) })).toThrow(
      "event r:0 (token) is invalid: text: Invalid input: expected string, received undefined",
    );
    expect(formatIssues(issuesOf(z.string(), 1), { root: "(root)" })).toBe("(root): Invalid input: expected string, received number");
  });
});
