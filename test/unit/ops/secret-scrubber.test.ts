import { describe, expect, it } from "vitest";
import { type Logger, silentLogger } from "../../../src/logger.js";
import { createSecretScrubber, SCRUBBED, scrubbingLogger } from "../../../src/ops/index.js";

const KEY = "sk-test-ABCDEFGH12345678";
const TOKEN = "tok_alice_7f3a9c";
const s = createSecretScrubber([KEY, TOKEN, "abc"]);

describe("secret scrubber", () => {
  it("replaces every configured secret, wherever and however often it occurs", () => {
    expect(s.scrub(`Incorrect API key provided: ${KEY}. Key ${KEY}!`)).toBe(`Incorrect API key provided: ${SCRUBBED}. Key ${SCRUBBED}!`);
    expect(s.scrub(`x${TOKEN}y`)).toBe(`x${SCRUBBED}y`);
  });

  it("removes a secret that contains another one whole", () => {
    const t = createSecretScrubber(["secret", "secret-and-more"]);
    expect(t.scrub("a secret-and-more b")).toBe(`a ${SCRUBBED} b`);
  });

  it("finds a secret with quotes or backslashes as JSON text spells it too", () => {
    const odd = 'tok"with\\odd-chars';
    const json = JSON.stringify({ error: `refused ${odd}` });
    expect(json).not.toContain(odd); // escaped there
    expect(createSecretScrubber([odd]).scrub(json)).toBe(JSON.stringify({ error: `refused ${SCRUBBED}` }));
  });

  it("reads a value under an authorization key as a credential, which the value alone does not show", () => {
    expect(s.scrubDeep({ headers: { Authorization: "abc123tok", "proxy-authorization": "Basic dXNlcjpwdw==", accept: "abc123tok" } })).toEqual({
      headers: { Authorization: SCRUBBED, "proxy-authorization": SCRUBBED, accept: "abc123tok" },
    });
    expect(s.scrubEntry("authorization", "Bearer")).toBe("Bearer"); // a scheme alone is no credential
  });

  it("does not scrub configured values too short to be secrets, nor treat them as patterns", () => {
    expect(s.scrub("abc def")).toBe("abc def");
    expect(createSecretScrubber(["a.c+"]).scrub("abcc a.c+")).toBe(`abcc ${SCRUBBED}`);
  });

  it("scrubs Bearer tokens whatever their origin", () => {
    expect(s.scrub("sent Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln and failed")).toBe(`sent Bearer ${SCRUBBED} and failed`);
    expect(s.scrub("bearer Zm9vYmFy==")).toBe(`bearer ${SCRUBBED}`);
  });

  it("scrubs Authorization header values, in header dumps and in JSON", () => {
    expect(s.scrub("Authorization: Basic dXNlcjpwYXNz")).toBe(`Authorization: ${SCRUBBED}`);
    expect(s.scrub('{"headers":{"authorization":"Bearer x1y2z3"}}')).toBe(`{"headers":{"authorization":"${SCRUBBED}"}}`);
    expect(s.scrub('{\\"Authorization\\":\\"Token 12345\\"}')).toBe(`{\\"Authorization\\":\\"${SCRUBBED}\\"}`);
    expect(s.scrub("authorization=raw-credential-123")).toBe(`authorization=${SCRUBBED}`);
    expect(s.scrub("Proxy-Authorization: Basic Zm9v")).toBe(`Proxy-Authorization: ${SCRUBBED}`);
  });

  it("scrubs OpenAI-style keys that were never configured", () => {
    expect(s.scrub("key sk-proj-AbCdEfGh_1234-xyz used")).toBe(`key ${SCRUBBED} used`);
    expect(s.scrub("sk-short")).toBe("sk-short");
  });

  it("leaves prose about tokens and headers alone, and is idempotent", () => {
    for (const text of [
      "A bearer token is required (Authorization: Bearer <token>)",
      "Unknown bearer token",
      'WWW-Authenticate: Bearer realm="tollgate"',
      "task-abcdefghijkl and disk-0123456789",
      "Model call failed: 500 upstream exploded",
    ]) expect(s.scrub(text)).toBe(text);
    const once = s.scrub(`Authorization: Bearer ${TOKEN} and ${KEY}`);
    expect(s.scrub(once)).toBe(once);
    // Configured secrets go first, exactly: the scheme word before one may stay.
    expect(once).toBe(`Authorization: Bearer ${SCRUBBED} and ${SCRUBBED}`);
  });

  it("scrubs every string of a structure, errors included, without changing the original", () => {
    const err = new Error(`401: ${KEY}`);
    const value = { msg: `Bearer ${TOKEN}`, nested: { list: [KEY, 1, null, true] }, err, at: new Date(0) };
    const out = s.scrubDeep(value) as any;
    expect(out.msg).toBe(`Bearer ${SCRUBBED}`);
    expect(out.nested.list).toEqual([SCRUBBED, 1, null, true]);
    expect(out.err).toMatchObject({ name: "Error", message: `401: ${SCRUBBED}` });
    expect(out.err.stack).toContain(`401: ${SCRUBBED}`);
    expect(out.at).toBe(new Date(0).toISOString());
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(value.msg).toBe(`Bearer ${TOKEN}`);
  });

  it("survives cycles", () => {
    const a: Record<string, unknown> = { k: KEY };
    a.self = a;
    expect(s.scrubDeep(a)).toEqual({ k: SCRUBBED, self: "[Circular]" });
  });
});

describe("scrubbing logger", () => {
  it("scrubs the message and every field of every line, err.message and stack included", () => {
    const lines: Array<[string, string, unknown]> = [];
    const inner: Logger = {
      ...silentLogger,
      info: (m, f) => lines.push(["info", m, f]),
      warn: (m, f) => lines.push(["warn", m, f]),
      error: (m, f) => lines.push(["error", m, f]),
    };
    const log = scrubbingLogger(inner, s);
    log.info(`key ${KEY}`);
    log.warn("model call failed", { message: `401 Incorrect API key provided: ${KEY}`, run_id: "r1" });
    log.error("boom", { err: new Error(`Authorization: Bearer ${TOKEN}`) });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(TOKEN);
    expect(lines[0]).toEqual(["info", `key ${SCRUBBED}`, undefined]);
    expect(lines[1]![2]).toEqual({ message: `401 Incorrect API key provided: ${SCRUBBED}`, run_id: "r1" });
    expect((lines[2]![2] as { err: { message: string; stack: string } }).err.message).toBe(`Authorization: Bearer ${SCRUBBED}`);
    expect((lines[2]![2] as { err: { stack: string } }).err.stack).toContain(`Authorization: Bearer ${SCRUBBED}`);
  });
});
