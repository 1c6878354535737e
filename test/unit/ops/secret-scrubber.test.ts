import fc from "fast-check";
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

/** Every run of `secret` of 12 characters or more, longest first. */
function runsOf(secret: string): string[] {
  const out: string[] = [];
  for (let n = secret.length; n >= 12; n--) for (let i = 0; i + n <= secret.length; i++) out.push(secret.slice(i, i + n));
  return out;
}

/** The longest run of `secret` left in `text` once whitespace and JSON string boundaries are left out; "" if none. */
function leftOf(secret: string, text: string): string {
  const flat = text.replace(/\\+[nrt]|\s+/g, "").replace(/\\*"[\s,:[\]{}]*(?:\\*"[^"\\\s]{0,64}\\*"\s*:[\s[{]*)?\\*"/g, "");
  return runsOf(secret).find((r) => flat.includes(r)) ?? "";
}

const b64At = (secret: string, offset: number) => Buffer.from("\u0001\u0002".slice(0, offset) + secret).toString("base64");

describe("secret scrubber: in pieces and in disguise", () => {
  const long = createSecretScrubber([KEY, TOKEN]);
  const [head, tail] = [KEY.slice(0, 8), KEY.slice(8)];

  it.each([
    ["split by a space", `refused ${KEY.slice(0, 9)} ${KEY.slice(9)} (401)`],
    ["split by a newline", `refused ${head}\n${tail}`],
    ["split by an escaped newline in JSON", JSON.stringify({ error: `refused ${head}\n${tail}` })],
    ["split over two JSON fields", JSON.stringify({ key_start: head, key_end: tail })],
    ["in three JSON fields of eight", JSON.stringify({ a: KEY.slice(0, 8), b: KEY.slice(8, 16), c: KEY.slice(16) })],
    ["split over two JSON strings of an array", JSON.stringify([KEY.slice(0, 6), KEY.slice(6)])],
    ["over two fields of JSON inside JSON", JSON.stringify({ message: JSON.stringify({ key_start: head, key_end: tail }) })],
    ["a 22-character tail on its own", `key ends ${KEY.slice(2)}`],
    ["a 12-character piece in prose", `it had ${KEY.slice(5, 17)} in it`],
    ["URL-encoded", `GET /x?key=${encodeURIComponent("a&" + KEY + "/")}`],
    ["base64 at offset 0", `data ${b64At(KEY, 0)}`],
    ["base64 at offset 1", `data ${b64At(KEY, 1)}`],
    ["base64 at offset 2", `data ${b64At(KEY, 2)}`],
    ["base64url", `data ${b64At(KEY, 1).replace(/\+/g, "-").replace(/\//g, "_")}`],
    ["JSON-escaped twice", JSON.stringify(JSON.stringify({ token: TOKEN }))],
  ])("%s: no run of 12 characters of the key is left", (_name, text) => {
    const out = long.scrub(text);
    expect(out).not.toBe(text);
    expect(leftOf(KEY, out) || leftOf(TOKEN, out)).toBe("");
    expect(leftOf(b64At(KEY, 0).slice(0, 30), out)).toBe("");
    expect(long.scrub(out), "scrubbing twice changes nothing more").toBe(out);
  });

  it("masks the whole span a split run covers, keeping the JSON around it JSON", () => {
    expect(long.scrub(`refused ${head}\n${tail}.`)).toBe(`refused ${SCRUBBED}.`);
    const json = long.scrub(JSON.stringify({ key_start: head, key_end: tail, other: "kept" }));
    expect(JSON.parse(json)).toEqual({ key_start: SCRUBBED, key_end: SCRUBBED, other: "kept" });
    const escaped = 'tok"with\\odd-chars-0123456789';
    const odd = createSecretScrubber([escaped]);
    expect(JSON.parse(odd.scrub(JSON.stringify({ e: JSON.stringify({ e: escaped }) })))).toEqual({ e: JSON.stringify({ e: SCRUBBED }) });
  });

  it("scrubs a URL password as a URL spells it, percent-encoded", () => {
    const password = "p@ss/w0rd+long!";
    const s = createSecretScrubber([password]);
    expect(s.scrub(`postgres://u:${encodeURIComponent(password)}@db/x`)).toBe(`postgres://u:${SCRUBBED}@db/x`);
  });

  it("leaves pieces shorter than 12 characters, and a short secret unless it is whole", () => {
    const short = createSecretScrubber(["pw-9Xq2"]);
    expect(short.scrub("pw-9Xq and 9Xq2")).toBe("pw-9Xq and 9Xq2");
    expect(short.scrub("pw-9 Xq2!")).toBe(`${SCRUBBED}!`);
    const pieces = `ends ${KEY.slice(-11)}; starts ${KEY.slice(0, 11)}`;
    expect(long.scrubExact(pieces)).toBe(pieces); // (scrub would still cut the "sk-…" start by its shape)
  });

  it("leaves ordinary text, JSON and base64 alone", () => {
    const texts = [
      "The quick brown fox jumps over the lazy dog; refunds take 3-5 business days.",
      JSON.stringify({ messages: [{ role: "ai", content: "Order A-1001 shipped to ada@example.com", id: "m1" }], n: 12345678 }),
      Buffer.from("an ordinary attachment, nothing secret in it at all, ".repeat(20)).toString("base64"),
      "sk-test- is how test keys begin; ABCDEFGH is a sequence; 12345678 a number",
    ];
    for (const text of texts) expect(long.scrub(text)).toBe(text);
  });

  it("finds whatever the precise search finds: the quick pre-check never lets a run through", () => {
    const piece = fc.constantFrom(...[0, 3, 6, 9, 12, 18].map((i) => KEY.slice(i, i + 6)), TOKEN.slice(0, 7), TOKEN.slice(7));
    const glue = fc.constantFrom("", " ", "\n", "\\n", '", "', '","k":"', '\\", \\"', "x", ",", ":", '"', "\\");
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, glue), { maxLength: 8 }), (parts) => {
        const text = parts.map(([p, g]) => p + g).join("");
        const out = long.scrub(text);
        expect(leftOf(KEY, out) || leftOf(TOKEN, out), JSON.stringify({ text, out })).toBe("");
      }),
      { numRuns: 3000 },
    );
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
