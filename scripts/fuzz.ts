/**
 * HTTP fuzzer: fast-check generated hostile requests against every endpoint of a running tollgate,
 * each checked against the wire contract (/work/shared/API.md, "Endpoints" and "Hostile clients"):
 * - no 5xx except `503` with `Retry-After`;
 * - every non-2xx answer with a body is JSON of exactly `{"error": {"code", "message"}}`;
 * - an error message is at most 400 characters and echoes no run of 201+ characters of the input;
 * - no request hangs (10 s each; an SSE answer is read up to its first chunk, then dropped);
 * - where the contract fixes the answer (a foreign `Host` or `Origin`, a non-JSON POST body,
 *   oversize or over-deep `metadata`, JSON that does not parse, an unknown endpoint), that answer.
 *
 * Bad-input families: malformed JSON, JSON nested 10…100,000 levels (built as strings, without
 * recursion), strings up to ~300 KB, control characters / NUL / lone surrogates / invalid UTF-8,
 * path tricks in ids (`..`, `%2e%2e`, `%2F`, `%00`, very long, unicode), wrong content types,
 * garbage `Last-Event-ID`, `limit` and `cursor`, duplicate keys, wrong types for every field,
 * extra fields, `edited_args` garbage, huge `decisions` arrays, oversize/over-deep `metadata`,
 * foreign `Host`/`Origin`, garbage `Authorization`, wrong methods and unknown paths, and
 * malformed HTTP written on raw sockets (no Host, two Hosts, smuggling shapes, bad chunks…).
 * Besides the garbage, well-formed runs and resumes hit the gate's own logic (stale and foreign
 * interrupt ids, unknown and duplicate calls, refused edits, rejections) and race each other.
 *
 * It keeps a few "target" threads waiting at an interrupt (the model asks for `send_email` when a
 * message says "email") and attacks those interrupts with their real ids too — but it never
 * approves legitimately: every decision that is not `approved: false` on a real call carries an
 * `edited_args` with an unknown key, which the contract refuses. So `refunds` and `outbox` must
 * stay empty.
 *
 *   npm run fuzz                                   # 100,000 requests, seed 1
 *   FUZZ_REQUESTS=30000 FUZZ_SEED=7 npm run fuzz
 *
 * `test/e2e/fuzz.test.ts` runs 5,000 of them in `npm test`.
 */
import http from "node:http";
import net from "node:net";
import fc from "fast-check";
import { TollgateClient } from "../src/client/index.js";
import type { RecordedRequest, Turn } from "../test/helpers/fake-openai.js";

// ---------------------------------------------------------------------------------------------
// Public API

export interface FuzzOptions {
  /** e.g. `http://127.0.0.1:8787` */
  baseUrl: string;
  /** Fuzz requests to send (maintenance requests that keep interrupts open come on top). */
  requests: number;
  seed: number;
  /** Sent with every request unless a request overrides the header (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** Requests in flight at once. Default 16. */
  concurrency?: number;
  /** Per-request deadline. Default 10 000 ms. */
  timeoutMs?: number;
  /** Threads kept waiting at an interrupt to attack. Default 4. */
  targets?: number;
  /** Called every `progressEvery` (default 1000) requests and at the end. */
  onProgress?: (p: { done: number; total: number; failures: number; elapsedMs: number }) => void;
  progressEvery?: number;
}

export interface FuzzFailure {
  index: number;
  family: string;
  reason: string;
  request: string;
  response: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  /** Requests the fuzzer sent to keep its target threads waiting at an interrupt (also checked). */
  maintenanceRequests: number;
  byStatus: Record<string, number>;
  byFamily: Record<string, number>;
  /** Statuses per endpoint family (the family name up to its first dot). */
  statusByEndpoint: Record<string, Record<string, number>>;
  /** Total failed checks (one request may fail several). */
  failureCount: number;
  failuresByReason: Record<string, number>;
  /** The first few failures of each reason, with the request to replay. */
  failures: FuzzFailure[];
  /** Requests with a contract-fixed answer, and how many got it. */
  expectations: { checked: number; met: number };
  /** Connection errors on a reused keep-alive socket, retried once on a fresh one (not failures). */
  retriedOnFreshConnection: number;
  /** The threads kept waiting at an interrupt and attacked. */
  targets: string[];
  durationMs: number;
  requestsPerSecond: number;
}

/** The model the fuzz stack runs on: `send_email` when the user's message says "email", else "ok". */
export function fuzzModelScript(req: RecordedRequest): Turn {
  const last = req.messages.at(-1) as { role?: string; content?: unknown } | undefined;
  const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  if (last?.role === "user" && /email/i.test(text)) {
    return { toolCalls: [{ name: "send_email", args: { to: "fuzz@example.com", subject: "fuzz", body: "fuzz body" } }] };
  }
  return { text: "ok" };
}

// ---------------------------------------------------------------------------------------------
// JSON values with raw fragments and duplicate keys

/** Verbatim JSON text (possibly invalid), inserted as-is by `toText`. Never carries a real id. */
class Raw {
  constructor(readonly text: string) {}
}
/** An object whose keys may repeat, in order. */
class Dup {
  constructor(readonly entries: Array<[string, J]>) {}
}
/** `undefined` as a field value means "leave the field out". */
type J = null | boolean | number | string | Raw | Dup | J[] | { [k: string]: J | undefined };

function isPlain(v: unknown): v is { [k: string]: J | undefined } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Raw) && !(v instanceof Dup);
}

/** Serializes a (shallow) value tree; the deep parts are `Raw` strings. */
function toText(v: J): string {
  if (v instanceof Raw) return v.text;
  if (v instanceof Dup) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${toText(x)}`).join(",")}}`;
  if (Array.isArray(v)) return `[${v.map(toText).join(",")}]`;
  if (isPlain(v)) {
    const parts: string[] = [];
    for (const k of Object.keys(v)) {
      const x = v[k];
      if (x !== undefined) parts.push(`${JSON.stringify(k)}:${toText(x)}`);
    }
    return `{${parts.join(",")}}`;
  }
  if (typeof v === "number" && !Number.isFinite(v)) return "null";
  return JSON.stringify(v);
}

/** Every string in a value tree (keys included) and the raw fragments: the request's "own input". */
function stringsOf(v: J, out: string[]): void {
  if (v instanceof Raw) out.push(v.text);
  else if (v instanceof Dup) for (const [k, x] of v.entries) (out.push(k), stringsOf(x, out));
  else if (Array.isArray(v)) for (const x of v) stringsOf(x, out);
  else if (isPlain(v)) for (const k of Object.keys(v)) (out.push(k), v[k] !== undefined && stringsOf(v[k]!, out));
  else if (typeof v === "string") out.push(v);
}

const POISON_KEY = "__fuzz_unknown_key__";

/**
 * The fuzzer's promise never to approve legitimately: any object naming a real call id whose
 * `approved` is not exactly `false` gets an `edited_args` with an unknown key (every value of a
 * repeated key included), which the contract answers with 400 and nothing decided. Returns
 * whether the tree names a real call at all.
 */
function poisonApprovals(v: J, realCalls: ReadonlySet<string>): { value: J; real: boolean } {
  let real = false;
  const poisonEdits = (e: J | undefined): J => {
    if (isPlain(e)) return { ...e, [POISON_KEY]: true };
    if (e instanceof Dup) return new Dup([...e.entries, [POISON_KEY, true]]);
    if (e === undefined) return { [POISON_KEY]: true };
    return e; // not an object at all: the contract refuses it already
  };
  const walk = (x: J): J => {
    if (x instanceof Raw || x === null || typeof x !== "object") return x;
    if (Array.isArray(x)) return x.map(walk);
    const entries: Array<[string, J | undefined]> = x instanceof Dup ? x.entries.map(([k, y]) => [k, walk(y)]) : Object.keys(x).map((k) => [k, x[k] === undefined ? undefined : walk(x[k]!)]);
    const namesReal = entries.some(([k, y]) => k === "call_id" && typeof y === "string" && realCalls.has(y));
    if (!namesReal) return x instanceof Dup ? new Dup(entries as Array<[string, J]>) : Object.fromEntries(entries);
    real = true;
    const approvedValues = entries.filter(([k]) => k === "approved").map(([, y]) => y);
    const surelyRejected = approvedValues.length > 0 && approvedValues.every((y) => y === false);
    if (surelyRejected) return x instanceof Dup ? new Dup(entries as Array<[string, J]>) : Object.fromEntries(entries);
    if (!entries.some(([k]) => k === "edited_args")) entries.push(["edited_args", undefined]);
    const fixed = entries.map(([k, y]): [string, J | undefined] => (k === "edited_args" ? [k, poisonEdits(y)] : [k, y]));
    return x instanceof Dup ? new Dup(fixed.filter((e): e is [string, J] => e[1] !== undefined)) : Object.fromEntries(fixed);
  };
  const value = walk(v);
  return { value, real };
}

// ---------------------------------------------------------------------------------------------
// Building blocks

/** Nested JSON, `n` levels, as a string: no recursion anywhere. */
export function deepJson(kind: "array" | "object" | "mixed" | "unclosed" | "overclosed", n: number): string {
  switch (kind) {
    case "array":
      return "[".repeat(n) + "]".repeat(n);
    case "object":
      return '{"a":'.repeat(n) + "1" + "}".repeat(n);
    case "mixed":
      return '[{"a":'.repeat(Math.ceil(n / 2)) + "0" + "}]".repeat(Math.ceil(n / 2));
    case "unclosed":
      return '{"a":['.repeat(n);
    case "overclosed":
      return "[".repeat(n) + "]".repeat(n + 1);
  }
}

const DEPTHS = [10, 31, 32, 33, 40, 64, 100, 1_000, 10_000, 50_000, 100_000];
const deepArb: fc.Arbitrary<Raw> = fc
  .tuple(fc.constantFrom("array", "object", "mixed", "unclosed", "overclosed") as fc.Arbitrary<Parameters<typeof deepJson>[0]>, fc.constantFrom(...DEPTHS))
  .map(([k, n]) => new Raw(deepJson(k, n)));
/** Deep but well-formed, at least `min` levels. */
const deepValidArb = (min: number): fc.Arbitrary<Raw> =>
  fc
    .tuple(fc.constantFrom("array", "object", "mixed") as fc.Arbitrary<"array" | "object" | "mixed">, fc.constantFrom(...DEPTHS.filter((d) => d >= min)))
    .map(([k, n]) => new Raw(deepJson(k, n)));

const controlChar = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const nastyUnit = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: controlChar },
  { weight: 2, arbitrary: loneSurrogate },
  { weight: 1, arbitrary: fc.constantFrom("\u0000", "\u2028", "\u2029", "\ufeff", "\u202e", "\ufffd", "\uffff", "😀", "\\", '"', "'", "<", "%", "/", ".", "*") },
);
const nastyString = fc.string({ unit: nastyUnit, maxLength: 60 });

/** Up to ~300 KB of one repeated piece. */
const hugeString = fc
  .tuple(fc.constantFrom("a", "\u0000", "é", "€", "😀", "\ud800", "\u001f", " ", "***", "%2e%2e/", "\\"), fc.constantFrom(201, 1_000, 8_193, 32_768, 32_769, 65_536, 150_000, 300_000))
  .map(([piece, n]) => piece.repeat(Math.max(1, Math.floor(n / piece.length))));

/** 32 KiB `message` limit, exactly at and just past the boundary, in 1- and 3-byte characters. */
const boundaryMessage = fc.constantFrom("a".repeat(32 * 1024), "a".repeat(32 * 1024 + 1), "€".repeat(10_922) + "aa", "€".repeat(10_923), " ".repeat(40_000));

const stringArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 5, arbitrary: nastyString },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\t\n", "***", "null", "undefined", "__proto__", "constructor", "a".repeat(201), "<script>alert(1)</script>", "'; DROP TABLE threads; --", "${jndi:ldap://x}") },
);

const rawNumber = fc.constantFrom("1e999", "-1e999", "NaN", "Infinity", "-0", "0x10", "01", "1.", ".5", "123456789012345678901234567890", "1e-400");

/** Any wrong-typed value for a field. */
const wrongType: fc.Arbitrary<J> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<J>(null, true, false, 0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2, [], {}, [1, "a"], { a: 1 }, "") },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<J> },
  { weight: 1, arbitrary: rawNumber.map((s) => new Raw(s)) },
  { weight: 1, arbitrary: deepArb },
  { weight: 1, arbitrary: hugeString },
);

/** Extra top-level fields. */
const extraFields: fc.Arbitrary<Record<string, J>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: fc.dictionary(fc.oneof(fc.string({ maxLength: 12 }), nastyString), wrongType, { maxKeys: 4 }) as fc.Arbitrary<Record<string, J>> },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, J>>(
      JSON.parse('{"__proto__": {"admin": true, "approved": true}}') as Record<string, J>,
      { constructor: { prototype: { polluted: true } } },
      { run_id: "x", status: "idle", owner: "root", sub: "admin", roles: ["admin"], by: "admin" },
    ),
  },
);

/** `null` (leave it) most of the time; `arb` once in `oneIn`. */
const rarely = <T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

// ---------------------------------------------------------------------------------------------
// Thread ids in paths

type IdChoice =
  | { kind: "target"; n: number }
  | { kind: "known"; n: number }
  | { kind: "fresh"; s: string }
  | { kind: "segment"; s: string } // already what goes into the path
  | { kind: "text"; s: string; encode: "percent" | "raw" }
  | { kind: "long"; n: number; piece: string };

const VALID_ID_CHAR = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".split(""));
const validIdArb = fc.string({ unit: VALID_ID_CHAR, minLength: 1, maxLength: 24 });
const TRICKY_SEGMENTS = [
  "..", ".", "...", "%2e%2e", "%2E%2E", "%2e", ".%2e", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "..%2F..%2Fetc%2Fpasswd", "..%5C..%5Cwindows",
  "a%2Fb", "%2F", "%2f..%2f", "%00", "a%00", "a%00b", "%", "%%", "%zz", "%E", "%ED%A0%80", "%ED%B0%80", "%C0%AE%C0%AE", "%C0%AF", "%FF%FE",
  "%E2%80%AE", "a%20b", "%20", "+", "~", "*", "'", "\"", "`", "<script>", "a;b", "a,b", "$(id)", "a%23b", "%3F", "a?b=c", "a#b", "con", "NUL",
  "%25", "%252e%252e", "a%0Ab", "a%0D%0Ab", "%09", "%7F", "\u00ff\u00fe", "\u00e9t\u00e9", "\u0080", "\u00c0\u00ae",
];

const idArb: fc.Arbitrary<IdChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.nat(63).map((n): IdChoice => ({ kind: "target", n })) },
  { weight: 3, arbitrary: fc.nat(1023).map((n): IdChoice => ({ kind: "known", n })) },
  { weight: 4, arbitrary: validIdArb.map((s): IdChoice => ({ kind: "fresh", s })) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_SEGMENTS).map((s): IdChoice => ({ kind: "segment", s })) },
  { weight: 3, arbitrary: fc.tuple(nastyString.filter((s) => s.length > 0), fc.constantFrom("percent", "raw") as fc.Arbitrary<"percent" | "raw">).map(([s, encode]): IdChoice => ({ kind: "text", s, encode })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(128, 129, 1_000, 8_000, 20_000, 100_000), fc.constantFrom("a", "-", "%41", "é", "%00", "..%2f")).map(([n, piece]): IdChoice => ({ kind: "long", n, piece })) },
);

/** UTF-8 percent-encoding of every character, lone surrogates as their (invalid) 3-byte form. */
function percentEncode(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let cp = c;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (/[A-Za-z0-9_-]/.test(String.fromCharCode(cp)) && cp < 0x80) {
      out += String.fromCharCode(cp);
      continue;
    }
    const bytes: number[] =
      cp < 0x80 ? [cp]
      : cp < 0x800 ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
      : cp < 0x10000 ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
      : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
    for (const b of bytes) out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** What Node lets into a request line: U+0021…U+00FF go raw (latin1 bytes), the rest percent-encoded. */
function nodeSafe(s: string): string {
  let out = "";
  for (const ch of s) out += /[\u0021-\u00ff]/.test(ch) ? ch : percentEncode(ch);
  return out;
}

/** Header values Node accepts: tab, U+0020…U+007E, U+0080…U+00FF; anything else becomes its low byte or `?`. */
function headerSafe(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 9 || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff)) out += s[i];
    else if ((c & 0xff) >= 0x80) out += String.fromCharCode(c & 0xff);
    else out += "?";
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------------------------------------
// Requests

interface State {
  origin: string;
  host: string;
  prefix: string;
  targets: Array<{ id: string; interruptId?: string; callIds: string[]; stale: string[]; cycles: number; generation: number }>;
  known: string[];
  runIds: string[];
  realCalls: Set<string>;
  fresh: number;
}

interface Expectation {
  status: number;
  code?: string;
  why: string;
  /** Other answers that are as right (e.g. the interrupt was closed by a concurrent request). */
  or?: Array<{ status: number; code?: string }>;
}

interface Req {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  chunked?: boolean;
  expect?: Expectation;
  /** Everything the client sent, for the echo check. */
  input: string[];
  /** Bytes written as they are on a raw socket (malformed HTTP); `method`/`path` only describe it. */
  raw?: Buffer;
  /** For a raw request the server may rightly close without an answer (e.g. a body that never comes). */
  silenceOk?: boolean;
  /** Finer than the spec's family, once built (e.g. `resume.real.malformed`). */
  family?: string;
}

interface Spec {
  family: string;
  build(st: State, defaults: Record<string, string>): Req;
}

interface Resolved {
  segment: string;
  value: string;
  valid: boolean;
}
const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;

function resolveId(c: IdChoice, st: State): Resolved {
  let segment: string;
  switch (c.kind) {
    case "target": {
      const t = st.targets[c.n % st.targets.length];
      segment = t ? t.id : "no-target";
      break;
    }
    case "known":
      segment = st.known.length ? st.known[c.n % st.known.length]! : `${st.prefix}k${c.n}`;
      break;
    case "fresh":
      segment = `${c.s}`;
      break;
    case "segment":
      segment = nodeSafe(c.s);
      break;
    case "text":
      segment = c.encode === "percent" ? percentEncode(c.s) : nodeSafe(c.s);
      break;
    case "long":
      segment = nodeSafe(c.piece.repeat(Math.ceil(c.n / c.piece.length)));
      break;
  }
  const value = safeDecode(segment);
  return { segment, value, valid: THREAD_ID.test(value) && !segment.includes("%") };
}

type Ct = { header?: string; jsonish: boolean; utf16?: boolean; label: string };
const CONTENT_TYPES: Ct[] = [
  { header: "application/json", jsonish: true, label: "json" },
  { header: "application/json; charset=utf-8", jsonish: true, label: "json-utf8" },
  { header: "APPLICATION/JSON;CHARSET=UTF-8", jsonish: true, label: "json-upper" },
  { header: "application/json; charset=utf-16", jsonish: false, utf16: true, label: "json-utf16" },
  { header: "text/plain", jsonish: false, label: "text" },
  { header: "text/plain;charset=UTF-8", jsonish: false, label: "text-utf8" },
  { header: "application/x-www-form-urlencoded", jsonish: false, label: "form" },
  { header: "multipart/form-data; boundary=----fuzz", jsonish: false, label: "multipart" },
  { header: undefined, jsonish: false, label: "none" },
  { header: "", jsonish: false, label: "empty" },
  { header: "json", jsonish: false, label: "garbage" },
  { header: "application/jsonx", jsonish: false, label: "garbage" },
  { header: "text/json", jsonish: false, label: "garbage" },
  { header: "application/", jsonish: false, label: "garbage" },
  { header: ";;;", jsonish: false, label: "garbage" },
  { header: "application/json, text/plain", jsonish: false, label: "garbage" },
  { header: "application/json; boundary=x; charset=latin1", jsonish: false, label: "garbage" },
  { header: "\u00ff\u00fe/\u00e9", jsonish: false, label: "garbage" },
];
/** Clearly not JSON: the contract's 415. (`charset=utf-16` and the near-misses are left open.) */
const NOT_JSON = new Set(["text", "text-utf8", "form", "multipart", "none"]);
const ctArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant(CONTENT_TYPES[0]!) },
  { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES.slice(1, 3)) },
  { weight: 6, arbitrary: fc.constantFrom(...CONTENT_TYPES.slice(3)) },
);

type BodyMode = "json" | "dup" | "malformed" | "bom" | "invalid-utf8" | "form" | "multipart" | "chunked";
const bodyModeArb: fc.Arbitrary<BodyMode> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<BodyMode>("json") },
  { weight: 2, arbitrary: fc.constant<BodyMode>("dup") },
  { weight: 4, arbitrary: fc.constant<BodyMode>("malformed") },
  { weight: 1, arbitrary: fc.constantFrom<BodyMode>("bom", "invalid-utf8", "form", "multipart", "chunked") },
);
const MALFORMED = [
  "truncate", "prepend", "append", "trailing-comma", "single-quotes", "comment", "undefined", "nul", "unquoted-key", "empty", "ws", "scalar-null",
  "scalar-array", "scalar-string", "scalar-number", "lone-brace", "nan",
] as const;
type Malformed = (typeof MALFORMED)[number];
/** Mutations that can never produce valid JSON from a serialized object. */
const ALWAYS_INVALID: ReadonlySet<Malformed> = new Set(["truncate", "prepend", "append", "trailing-comma", "comment", "undefined", "lone-brace", "nan"]);

function malform(text: string, how: Malformed, at: number): string {
  const pos = text.length ? at % text.length : 0;
  switch (how) {
    case "truncate":
      return text.slice(0, Math.max(0, Math.min(pos, text.length - 1)));
    case "prepend":
      return "x" + text;
    case "append":
      return text + "}}";
    case "trailing-comma":
      return text.endsWith("}") ? text.slice(0, -1) + ",}" : text + ",";
    case "single-quotes":
      return text.replaceAll('"', "'");
    case "comment":
      return "/* c */" + text;
    case "undefined":
      return text.endsWith("}") ? text.slice(0, -1) + (text.length > 2 ? "," : "") + '"x":undefined}' : "undefined";
    case "nul":
      return text.slice(0, pos) + "\u0000" + text.slice(pos);
    case "unquoted-key":
      return text.replace(/"([A-Za-z_]+)":/, "$1:");
    case "empty":
      return "";
    case "ws":
      return " \n\t ";
    case "scalar-null":
      return "null";
    case "scalar-array":
      return "[]";
    case "scalar-string":
      return '"message"';
    case "scalar-number":
      return "42";
    case "lone-brace":
      return "{";
    case "nan":
      return '{"message": NaN}';
  }
}

/** Duplicates the first key of a plain object, with a decoy value first (parsers keep the last). */
function withDupKeys(v: J, decoy: J, which: number): J {
  if (!isPlain(v)) return v;
  const entries = Object.keys(v).filter((k) => v[k] !== undefined).map((k): [string, J] => [k, v[k]!]);
  if (entries.length === 0) return new Dup([["message", "a"], ["message", "b"]]);
  const i = which % entries.length;
  const [k] = entries[i]!;
  entries.splice(i, 0, [k, decoy]);
  return new Dup(entries);
}

interface BodyParts {
  ct: Ct;
  mode: BodyMode;
  malformed: Malformed;
  at: number;
  decoy: J;
}
const bodyPartsArb: fc.Arbitrary<BodyParts> = fc.record({
  ct: ctArb,
  mode: bodyModeArb,
  malformed: fc.constantFrom(...MALFORMED),
  at: fc.nat(),
  decoy: wrongType,
});

interface BuiltBody {
  body?: Buffer;
  headers: Record<string, string>;
  chunked: boolean;
  /** The text parsed as JSON (so a 400 may be expected) when it does not. */
  invalidJson: boolean;
  /** Sent as a JSON media type, UTF-8, no tricks: the body is judged on its content alone. */
  plainJson: boolean;
  nonEmpty: boolean;
  ctLabel: string;
  input: string[];
}

/** Serializes a body value the way `parts` says, after making sure it cannot approve a real call. */
function buildBody(value: J | undefined, parts: BodyParts, st: State): BuiltBody {
  const input: string[] = [];
  const headers: Record<string, string> = {};
  if (parts.ct.header !== undefined) headers["content-type"] = headerSafe(parts.ct.header);
  let mode = parts.mode;
  let text: string;
  let real = false;
  if (value === undefined) {
    text = "";
  } else {
    let v = value;
    if (mode === "dup") v = withDupKeys(v, parts.decoy, parts.at);
    const safe = poisonApprovals(v, st.realCalls);
    real = safe.real;
    stringsOf(safe.value, input);
    text = toText(safe.value);
  }
  if (mode === "malformed" && value !== undefined) {
    // A mutation that might still parse must not run over a body that names a real call.
    const how = real && !ALWAYS_INVALID.has(parts.malformed) ? "truncate" : parts.malformed;
    text = malform(text, how, parts.at);
  }
  if (mode === "form") {
    text = `message=${encodeURIComponent("hello")}&thread_id=x&metadata=%7B%7D`;
    if (real) text = "message=x";
  }
  if (mode === "multipart") text = `------fuzz\r\nContent-Disposition: form-data; name="message"\r\n\r\nhello\r\n------fuzz--\r\n`;
  let body: Buffer;
  if (parts.ct.utf16) body = Buffer.from("\ufeff" + text, "utf16le");
  else if (mode === "bom") body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]);
  else if (mode === "invalid-utf8" && text.length > 2) {
    const cut = text.indexOf('"', 1) > 0 ? text.indexOf('"', 1) + 1 : 1;
    body = Buffer.concat([Buffer.from(text.slice(0, cut), "utf8"), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0, 0xaf, 0x80]), Buffer.from(text.slice(cut), "utf8")]);
  } else body = Buffer.from(text, "utf8");
  input.push(text);
  let invalidJson: boolean;
  try {
    JSON.parse(text);
    invalidJson = false;
  } catch {
    invalidJson = true;
  }
  if (mode === "invalid-utf8" && text.length <= 2) mode = "json";
  const plainJson = parts.ct.jsonish && (mode === "json" || mode === "malformed" || mode === "chunked");
  return {
    body: body.length || value !== undefined ? body : undefined,
    headers,
    chunked: mode === "chunked" && body.length > 1,
    invalidJson,
    plainJson,
    nonEmpty: body.length > 0,
    ctLabel: parts.ct.label,
    input,
  };
}

// Header families ------------------------------------------------------------------------------

type HostChoice = { kind: "default" } | { kind: "foreign"; v: string } | { kind: "allowed"; v: string } | { kind: "odd"; v: string };
const hostArb: fc.Arbitrary<HostChoice> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<HostChoice>({ kind: "default" }) },
  { weight: 2, arbitrary: fc.constantFrom("evil.example", "evil.example:8787", "127.0.0.1.nip.io", "localhost.evil.example", "attacker.com:80", "10.0.0.1", "127.0.0.2", "[::2]", "0.0.0.0", "example.com:0").map((v): HostChoice => ({ kind: "foreign", v })) },
  { weight: 1, arbitrary: fc.constantFrom("localhost", "127.0.0.1", "[::1]", "localhost:1", "[::1]:65535").map((v): HostChoice => ({ kind: "allowed", v })) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom(" ", "localhost:notaport", "LOCALHOST", "[::1", "127.0.0.1:99999", "127.0.0.1 evil.example", "localhost:@evil.example", "127.0.0.1:1, evil.example", "\u00ff\u00fe"), nastyString).map((v): HostChoice => ({ kind: "odd", v })) },
);

type OriginChoice = { kind: "none" } | { kind: "own" } | { kind: "foreign"; v: string } | { kind: "odd"; v: string };
const originArb: fc.Arbitrary<OriginChoice> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<OriginChoice>({ kind: "none" }) },
  { weight: 1, arbitrary: fc.constant<OriginChoice>({ kind: "own" }) },
  { weight: 2, arbitrary: fc.constantFrom("http://evil.example", "https://attacker.com:8443", "null", "http://127.0.0.1.nip.io", "file://", "chrome-extension://abc", "http://evil.example/").map((v): OriginChoice => ({ kind: "foreign", v })) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom("", "http://", "*", "\u00ff"), nastyString).map((v): OriginChoice => ({ kind: "odd", v })) },
);

const authArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 20, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom("", "Bearer", "Bearer ", "Basic YWRtaW46YWRtaW4=", "Bearer null", "bearer tok-alice ", "Bearer " + "x".repeat(5000), "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9."), nastyString.map((s) => "Bearer " + s)) },
);

interface EdgeParts {
  host: HostChoice;
  origin: OriginChoice;
  auth: string | undefined;
}
const edgeArb: fc.Arbitrary<EdgeParts> = fc.record({ host: hostArb, origin: originArb, auth: authArb });

/**
 * Headers for the edge families, and the answer the contract fixes for them (in its order:
 * invalid_host → forbidden_origin → 401). `/healthz` is exempt from the Host check.
 */
function edge(e: EdgeParts, st: State, defaults: Record<string, string>, healthz: boolean, authed: boolean): { headers: Record<string, string>; expect?: Expectation; clean: boolean } {
  const headers: Record<string, string> = {};
  let expect: Expectation | undefined;
  if (e.host.kind !== "default") headers.host = headerSafe(e.host.v);
  if (e.origin.kind === "own") headers.origin = st.origin;
  else if (e.origin.kind !== "none") headers.origin = headerSafe(e.origin.v);
  if (e.auth !== undefined) headers.authorization = headerSafe(e.auth);
  if (!healthz) {
    if (e.host.kind === "foreign") expect = { status: 400, code: "invalid_host", why: `Host ${e.host.v} is not allowed` };
    else if (e.origin.kind === "foreign" && e.host.kind !== "odd") expect = { status: 403, code: "forbidden_origin", why: `Origin ${e.origin.v} is foreign` };
    else if (e.auth !== undefined && authed && e.host.kind !== "odd" && e.origin.kind !== "odd" && !Object.values(defaults).includes(e.auth))
      expect = { status: 401, code: "unauthorized", why: "garbage Authorization with auth on" };
  }
  // "Own origin" is only clear-cut when the Host is the one the server was reached by.
  const clean =
    e.host.kind !== "foreign" && e.host.kind !== "odd" && e.origin.kind !== "foreign" && e.origin.kind !== "odd" && e.auth === undefined &&
    !(e.host.kind !== "default" && e.origin.kind === "own");
  return { headers, expect, clean };
}

function finish(
  family: string,
  method: string,
  path: string,
  e: ReturnType<typeof edge>,
  defaults: Record<string, string>,
  extra: { headers?: Record<string, string>; built?: BuiltBody; expect?: Expectation; input?: string[]; route?: boolean },
): Req {
  const headers: Record<string, string> = { ...defaults, ...(extra.built?.headers ?? {}), ...(extra.headers ?? {}), ...e.headers };
  const input = [path, safeDecode(path), ...Object.values(headers), ...(extra.built?.input ?? []), ...(extra.input ?? [])];
  // Node itself answers 431 to a request head over 16 KiB, and 400 to a request-target that is not
  // a URI (raw bytes over 0x7F, `\`, `"`, `<`…), before any rule of the contract.
  const headSize = path.length + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  if (headSize > 15_000 || !/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/.test(path)) return { method, path, headers, body: extra.built?.body, chunked: extra.built?.chunked, input, family };
  let expect = e.expect;
  if (!expect && e.clean && extra.route && extra.built && method === "POST" && extra.built.nonEmpty && NOT_JSON.has(extra.built.ctLabel)) {
    expect = { status: 415, code: "unsupported_media_type", why: `POST body sent as ${extra.built.ctLabel}` };
  }
  if (!expect && e.clean) expect = extra.expect;
  return { method, path, headers, body: extra.built?.body, chunked: extra.built?.chunked, expect, input, family };
}

// Endpoint arbitraries ---------------------------------------------------------------------------

const lastEventIdArb = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.tuple(fc.nat(63), fc.oneof(fc.constantFrom("-1", "0", "1", "2", "3", "999999", "9007199254740993", "1e3", "0x1", " 1", "1 ", "", "NaN", "-0", "1.5", "+1", "٣"), fc.nat().map(String))).map(([n, seq]) => ({ run: n, seq })) },
  { weight: 1, arbitrary: fc.constantFrom(":", "::", ":0", "a:", "a:b:c:1", "0", "-1", "undefined:0", "null", "\u00ff:1", "run:" + "9".repeat(400), "x".repeat(6000), "%00:1") },
);
function lastEventIdText(v: string | { run: number; seq: string }, st: State): string {
  if (typeof v === "string") return v;
  const runId = st.runIds.length ? st.runIds[v.run % st.runIds.length]! : "00000000-0000-0000-0000-000000000000";
  return `${runId}:${v.seq}`;
}

const queryValueArb = fc.oneof(
  fc.constantFrom("", "0", "1", "50", "200", "201", "-1", "1.5", "1e2", "0x10", "NaN", "Infinity", " 5", "5abc", "99999999999999999999", "%00", "null", "[]", "%ZZ", "%E0%A4%A", "a".repeat(2000)),
  nastyString.map(percentEncode),
  fc.string({ maxLength: 40 }).map(nodeSafe),
);

const threadsListArb: fc.Arbitrary<Spec> = fc
  .record({ limit: fc.option(queryValueArb), cursor: fc.option(queryValueArb), dupe: fc.boolean(), junk: rarely(fc.constantFrom("&&&", "&limit[]=1", "&cursor=", "&=", "&%00=%00", "&limit=5&limit=500", "#frag"), 4), edge: edgeArb })
  .map(
    (r): Spec => ({
      family: "threads.list",
      build(st, defaults) {
        const q: string[] = [];
        if (r.limit !== null) q.push(`limit=${r.limit}`);
        if (r.cursor !== null) q.push(`cursor=${r.cursor}`);
        if (r.dupe && r.limit !== null) q.push(`limit=${r.limit}`);
        const path = nodeSafe(`/threads${q.length || r.junk ? "?" : ""}${q.join("&")}${r.junk ?? ""}`);
        return finish("threads.list", "GET", path, edge(r.edge, st, defaults, false, !!defaults.authorization), defaults, {});
      },
    }),
  );

/** GET /threads/:id, …/audit, …/stream, /approvals, /me, /healthz. */
const getArb: fc.Arbitrary<Spec> = fc
  .record({
    what: fc.constantFrom("thread", "audit", "stream", "stream", "approvals", "me", "healthz", "openapi", "metrics"),
    id: idArb,
    lastId: fc.option(lastEventIdArb),
    lastIdIn: fc.constantFrom("header", "query", "both"),
    accept: rarely(fc.constantFrom("text/event-stream", "application/json", "*/*", "text/html", "\u00ff"), 4),
    query: rarely(fc.constantFrom("?x=1", "?", "?limit=-1", "?%00", "?a=%ZZ"), 6),
    edge: edgeArb,
  })
  .map(
    (r): Spec => ({
      family: `get.${r.what}`,
      build(st, defaults) {
        const id = resolveId(r.id, st);
        const headers: Record<string, string> = {};
        if (r.accept) headers.accept = headerSafe(r.accept);
        let path: string;
        let family = `get.${r.what}`;
        const input: string[] = [id.value];
        switch (r.what) {
          case "thread":
            path = `/threads/${id.segment}`;
            break;
          case "audit":
            path = `/threads/${id.segment}/audit`;
            break;
          case "stream": {
            path = `/threads/${id.segment}/stream`;
            if (r.lastId !== null) {
              const text = lastEventIdText(r.lastId, st);
              input.push(text);
              if (r.lastIdIn !== "query") headers["last-event-id"] = headerSafe(text);
              if (r.lastIdIn !== "header") path += `?last_event_id=${percentEncode(text)}`;
              family += ".last-event-id";
            }
            break;
          }
          case "approvals":
            path = "/approvals";
            break;
          case "me":
            path = "/me";
            break;
          case "healthz":
            path = "/healthz";
            break;
          case "openapi":
            path = "/openapi.json";
            break;
          default:
            path = "/metrics";
        }
        if (r.query && r.what !== "stream") path += r.query;
        const e = edge(r.edge, st, defaults, r.what === "healthz", !!defaults.authorization && r.what !== "openapi");
        const expect: Expectation | undefined =
          r.what === "healthz" && e.clean ? { status: 200, why: "healthz answers" }
          : r.what === "me" && e.clean && !r.query ? { status: 200, why: "GET /me answers" }
          : undefined;
        return finish(family, "GET", nodeSafe(path), e, defaults, { headers, expect, input });
      },
    }),
  );

const messageArb: fc.Arbitrary<J | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("hello", "hi there", "ok?", "where is A-1001") },
  { weight: 3, arbitrary: fc.constantFrom("please email the customer", "email me", "EMAIL") },
  { weight: 6, arbitrary: stringArb },
  { weight: 1, arbitrary: boundaryMessage },
  { weight: 4, arbitrary: wrongType },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const onDisconnectArb: fc.Arbitrary<J | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom("cancel", "continue") },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom("CANCEL", "continue ", "", "detach"), wrongType) },
);

const runsArb: fc.Arbitrary<Spec> = fc
  .record({ id: idArb, message: messageArb, onDisconnect: onDisconnectArb, extra: extraFields, whole: rarely(wrongType, 8), parts: bodyPartsArb, accept: rarely(fc.constantFrom("text/event-stream", "application/json"), 4), edge: edgeArb })
  .map(
    (r): Spec => ({
      family: "runs",
      build(st, defaults) {
        const id = resolveId(r.id, st);
        const value: J = r.whole !== null ? r.whole : { ...r.extra, message: r.message, on_disconnect: r.onDisconnect };
        const built = buildBody(value, r.parts, st);
        const e = edge(r.edge, st, defaults, false, !!defaults.authorization);
        const expect = id.valid && built.plainJson && built.invalidJson ? { status: 400, code: "invalid_request", why: "body is not JSON" } : undefined;
        return finish(`runs.${r.parts.mode}`, "POST", `/threads/${id.segment}/runs`, e, defaults, { built, expect, headers: r.accept ? { accept: r.accept } : {}, input: [id.value], route: id.valid });
      },
    }),
  );

const POISON_EDITS: J[] = [
  { to: "***" }, { body: "***" }, { to: "not-an-email" }, { subject: 123 }, { body: null }, { unknown_key: 1 }, { to: "a@b.c", subject: "s", body: "b", extra: 1 },
  [], "edits", 0, true, { "": 1 }, { constructor: { prototype: { approved: true } } }, { to: ["x@y.z"] }, { subject: { $ne: 1 } },
];
const editedArgsArb: fc.Arbitrary<J | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom(...POISON_EDITS) },
  { weight: 2, arbitrary: wrongType },
  { weight: 1, arbitrary: fc.record({ subject: stringArb, body: stringArb }) as fc.Arbitrary<J> },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 100, max: 5000 }), fc.constantFrom<J>(null, 1, "x", "***", [], {})).map(([n, v]) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, v])) as J) },
);

type CallChoice = { kind: "real"; n: number } | { kind: "value"; v: J | undefined };
const callIdArb: fc.Arbitrary<CallChoice> = fc.oneof(
  { weight: 3, arbitrary: fc.nat(7).map((n): CallChoice => ({ kind: "real", n })) },
  { weight: 3, arbitrary: stringArb.map((v): CallChoice => ({ kind: "value", v })) },
  { weight: 1, arbitrary: fc.constantFrom("call_1", "call_0", "call_-1", "*", "%", "call_1 ").map((v): CallChoice => ({ kind: "value", v })) },
  { weight: 1, arbitrary: wrongType.map((v): CallChoice => ({ kind: "value", v })) },
  { weight: 1, arbitrary: fc.constant<CallChoice>({ kind: "value", v: undefined }) },
);
const decisionArb = fc.record({
  call: callIdArb,
  approved: fc.oneof(
    { weight: 4, arbitrary: fc.boolean() as fc.Arbitrary<J | undefined> },
    { weight: 1, arbitrary: fc.constantFrom<J | undefined>("true", "false", 1, 0, null, undefined, [], {}) },
  ),
  reason: fc.option(fc.oneof(stringArb as fc.Arbitrary<J>, wrongType), { freq: 3 }),
  edited: editedArgsArb,
  extra: extraFields,
});
type DecisionParts = typeof decisionArb extends fc.Arbitrary<infer T> ? T : never;

type InterruptChoice = { kind: "real" } | { kind: "stale"; n: number } | { kind: "value"; v: J | undefined };
const interruptArb: fc.Arbitrary<InterruptChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<InterruptChoice>({ kind: "real" }) },
  { weight: 1, arbitrary: fc.nat(15).map((n): InterruptChoice => ({ kind: "stale", n })) },
  { weight: 2, arbitrary: stringArb.map((v): InterruptChoice => ({ kind: "value", v })) },
  { weight: 1, arbitrary: wrongType.map((v): InterruptChoice => ({ kind: "value", v })) },
  { weight: 1, arbitrary: fc.constant<InterruptChoice>({ kind: "value", v: undefined }) },
);

type DecisionsChoice =
  | { kind: "list"; items: DecisionParts[] }
  | { kind: "huge"; n: number; item: DecisionParts; distinct: boolean }
  | { kind: "value"; v: J | undefined };
const decisionsArb: fc.Arbitrary<DecisionsChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.array(decisionArb, { maxLength: 4 }).map((items): DecisionsChoice => ({ kind: "list", items })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(100, 1_000, 5_000, 7_000, 20_000, 100_000), decisionArb, fc.boolean()).map(([n, item, distinct]): DecisionsChoice => ({ kind: "huge", n, item, distinct })) },
  { weight: 2, arbitrary: wrongType.map((v): DecisionsChoice => ({ kind: "value", v })) },
  { weight: 1, arbitrary: fc.constant<DecisionsChoice>({ kind: "value", v: undefined }) },
);

function decisionValue(d: DecisionParts, target: State["targets"][number] | undefined): J {
  const call = d.call.kind === "real" ? (target?.callIds.length ? target.callIds[d.call.n % target.callIds.length] : `call_${d.call.n}`) : d.call.v;
  return { ...d.extra, call_id: call, approved: d.approved, reason: d.reason ?? undefined, edited_args: d.edited };
}

const resumeArb: fc.Arbitrary<Spec> = fc
  .record({
    target: fc.nat(63),
    otherThread: rarely(idArb, 4),
    interrupt: interruptArb,
    decisions: decisionsArb,
    onDisconnect: onDisconnectArb,
    extra: extraFields,
    whole: rarely(wrongType, 10),
    parts: bodyPartsArb,
    accept: rarely(fc.constantFrom("text/event-stream", "application/json", "text/event-stream;q=0"), 3),
    edge: edgeArb,
  })
  .map(
    (r): Spec => ({
      family: "resume",
      build(st, defaults) {
        const target = st.targets.length ? st.targets[r.target % st.targets.length] : undefined;
        const id = r.otherThread ? resolveId(r.otherThread, st) : { segment: target?.id ?? "none", value: target?.id ?? "none", valid: true };
        const interruptId: J | undefined =
          r.interrupt.kind === "real" ? (target?.interruptId ?? "no-open-interrupt")
          : r.interrupt.kind === "stale" ? (target?.stale.length ? target.stale[r.interrupt.n % target.stale.length] : "stale")
          : r.interrupt.v;
        let decisions: J | undefined;
        if (r.decisions.kind === "list") decisions = r.decisions.items.map((d) => decisionValue(d, target));
        else if (r.decisions.kind === "huge") {
          const one = decisionValue(r.decisions.item, target);
          const { distinct } = r.decisions;
          // Many entries, not many megabytes: a fat entry is repeated fewer times (~1.5 MB at most).
          const n = Math.max(1, Math.min(r.decisions.n, Math.floor(1_500_000 / toText(one).length)));
          decisions = Array.from({ length: n }, (_, i) => (distinct && isPlain(one) ? { ...one, call_id: `c${i}` } : one));
        } else decisions = r.decisions.v;
        const value: J = r.whole !== null ? r.whole : { ...r.extra, interrupt_id: interruptId, decisions, on_disconnect: r.onDisconnect };
        const built = buildBody(value, r.parts, st);
        const e = edge(r.edge, st, defaults, false, !!defaults.authorization);
        const expect = id.valid && built.plainJson && built.invalidJson ? { status: 400, code: "invalid_request", why: "body is not JSON" } : undefined;
        const family = `resume.${r.interrupt.kind}${r.decisions.kind === "huge" ? ".huge" : ""}.${r.parts.mode}`;
        return finish(family, "POST", `/threads/${id.segment}/resume`, e, defaults, { built, expect, headers: r.accept ? { accept: r.accept } : {}, input: [id.value], route: id.valid });
      },
    }),
  );

const CLEAN_PARTS: BodyParts = { ct: CONTENT_TYPES[0]!, mode: "json", malformed: "truncate", at: 0, decoy: null };
const NO_EDGE: EdgeParts = { host: { kind: "default" }, origin: { kind: "none" }, auth: undefined };

/**
 * Well-formed resumes against the open interrupts: the gate's own logic (stale and foreign
 * interrupt ids, unknown calls, refused edits, plain rejections, races with the other requests).
 * Every approval of a real call carries a refused edit (see `poisonApprovals`).
 */
type CleanResume = "reject" | "reject-all" | "refused-edit" | "unknown-call" | "stale" | "foreign" | "duplicate-call";
const cleanResumeArb: fc.Arbitrary<Spec> = fc
  .record({
    kind: fc.constantFrom<CleanResume>("reject", "reject-all", "refused-edit", "refused-edit", "refused-edit", "unknown-call", "stale", "foreign", "duplicate-call"),
    target: fc.nat(63),
    other: fc.nat(63),
    edit: fc.constantFrom<J>({ to: "***" }, { body: "***" }, { to: "not-an-email" }, { subject: 123 }, { body: null }, { cc: "x@example.com" }, { to: "x@example.com", bcc: "y@example.com" }, {}),
    reason: fc.oneof(fc.constant(undefined), stringArb),
    stream: fc.boolean(),
    parts: fc.oneof({ weight: 4, arbitrary: fc.constant(CLEAN_PARTS) }, { weight: 1, arbitrary: bodyPartsArb }),
  })
  .map(
    (r): Spec => ({
      family: `resume.clean.${r.kind}`,
      build(st, defaults) {
        const t = st.targets[r.target % st.targets.length]!;
        const other = st.targets[r.other % st.targets.length]!;
        const interruptId =
          r.kind === "stale" ? (t.stale.at(-1) ?? "stale-interrupt")
          : r.kind === "foreign" ? (other !== t ? (other.interruptId ?? "none") : "foreign-interrupt")
          : (t.interruptId ?? "no-open-interrupt");
        const call = t.callIds[0] ?? "call_none";
        const decisions: J =
          r.kind === "reject" ? [{ call_id: call, approved: false, reason: r.reason }]
          : r.kind === "reject-all" ? []
          : r.kind === "refused-edit" ? [{ call_id: call, approved: true, edited_args: r.edit }]
          : r.kind === "unknown-call" ? [{ call_id: `${call}x`, approved: true }]
          : r.kind === "duplicate-call" ? [{ call_id: call, approved: false }, { call_id: call, approved: true }]
          : [{ call_id: call, approved: true }];
        const built = buildBody({ interrupt_id: interruptId, decisions }, r.parts, st);
        // A concurrent request may have closed the interrupt meanwhile; with a rate limit set, 429
        // comes before 409/422 in the contract's order (and is taken for the edit check too).
        const limited = { status: 429, code: "rate_limited" };
        const closed = [{ status: 409, code: "not_waiting" }, { status: 409, code: "stale_interrupt" }, { status: 409, code: "thread_busy" }, limited];
        let expect: Expectation | undefined;
        if (r.parts === CLEAN_PARTS && t.interruptId) {
          if (r.kind === "refused-edit") expect = { status: 400, code: "invalid_request", why: "an edit the contract refuses", or: closed };
          if (r.kind === "unknown-call") expect = { status: 422, code: "unknown_call", why: "a call that is not pending", or: closed };
          if (r.kind === "duplicate-call") expect = { status: 400, code: "invalid_request", why: "two decisions on one call", or: closed };
          if (r.kind === "stale" && t.stale.length) expect = { status: 409, why: "an interrupt that is no longer open", or: [limited] };
          if (r.kind === "foreign" && other !== t && other.interruptId) expect = { status: 409, why: "another thread's interrupt", or: [{ status: 422 }, limited] };
        }
        return finish(`resume.clean.${r.kind}${r.parts === CLEAN_PARTS ? "" : "." + r.parts.mode}`, "POST", `/threads/${t.id}/resume`, edge(NO_EDGE, st, defaults, false, false), defaults, {
          built,
          expect,
          headers: r.stream ? { accept: "text/event-stream" } : {},
          route: true,
        });
      },
    }),
  );

/** Well-formed messages, on targets and fresh threads: runs that really start, collide and get cut off. */
const cleanRunArb: fc.Arbitrary<Spec> = fc
  .record({ id: fc.oneof(fc.nat(63).map((n): IdChoice => ({ kind: "target", n })), validIdArb.map((s): IdChoice => ({ kind: "fresh", s })), fc.nat(1023).map((n): IdChoice => ({ kind: "known", n }))), message: fc.constantFrom("hello", "please email the customer", "status?"), onDisconnect: fc.constantFrom<J | undefined>(undefined, "cancel", "continue") })
  .map(
    (r): Spec => ({
      family: "runs.clean",
      build(st, defaults) {
        const id = resolveId(r.id, st);
        const built = buildBody({ message: r.message, on_disconnect: r.onDisconnect }, CLEAN_PARTS, st);
        return finish("runs.clean", "POST", `/threads/${id.segment}/runs`, edge(NO_EDGE, st, defaults, false, false), defaults, { built, route: true });
      },
    }),
  );

const cancelArb: fc.Arbitrary<Spec> = fc
  .record({ id: idArb, body: fc.option(wrongType, { freq: 2 }), parts: bodyPartsArb, noBody: fc.boolean(), edge: edgeArb })
  .map(
    (r): Spec => ({
      family: "cancel",
      build(st, defaults) {
        const id = resolveId(r.id, st);
        const e = edge(r.edge, st, defaults, false, !!defaults.authorization);
        if (r.noBody) return finish("cancel.no-body", "POST", `/threads/${id.segment}/cancel`, e, defaults, { input: [id.value] });
        const built = buildBody(r.body ?? {}, r.parts, st);
        return finish(`cancel.${r.parts.mode}`, "POST", `/threads/${id.segment}/cancel`, e, defaults, { built, input: [id.value], route: id.valid });
      },
    }),
  );

type MetaChoice = { kind: "ok"; v: J | undefined } | { kind: "oversize"; v: J } | { kind: "deep"; v: J } | { kind: "garbage"; v: J };
const metadataArb: fc.Arbitrary<MetaChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.constant(undefined), fc.constantFrom<J>({}, { a: 1 }, { tags: ["x"], n: null }), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<J>, { maxKeys: 5 })).map((v): MetaChoice => ({ kind: "ok", v })) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom(9_000, 20_000, 100_000, 240_000).map((n): J => ({ blob: "x".repeat(n) })),
      fc.constantFrom(1_000, 2_000, 10_000).map((n): J => Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, i]))),
      fc.constantFrom(9_000, 50_000).map((n): J => ({ list: new Raw(`[${Array.from({ length: Math.ceil(n / 2) }, () => "0").join(",")}]`) })),
    ).map((v): MetaChoice => ({ kind: "oversize", v })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(deepValidArb(40), fc.boolean()).map(([raw, inside]): MetaChoice => ({ kind: "deep", v: inside ? { nested: { deeper: raw } } : { d: raw } })),
  },
  { weight: 2, arbitrary: wrongType.filter((v) => v !== null && !isPlain(v)).map((v): MetaChoice => ({ kind: "garbage", v })) },
);

type TidChoice = null | IdChoice | { kind: "json"; v: J };
const createThreadArb: fc.Arbitrary<Spec> = fc
  .record({
    threadId: fc.oneof(
      { weight: 3, arbitrary: fc.constant<TidChoice>(null) },
      { weight: 3, arbitrary: idArb as fc.Arbitrary<TidChoice> },
      { weight: 1, arbitrary: wrongType.map((v): TidChoice => ({ kind: "json", v })) },
    ),
    metadata: metadataArb,
    extra: extraFields,
    whole: rarely(wrongType, 10),
    empty: rarely(fc.constantFrom("", "{}", " "), 8),
    parts: bodyPartsArb,
    edge: edgeArb,
  })
  .map(
    (r): Spec => ({
      family: "threads.create",
      build(st, defaults) {
        let threadId: J | undefined;
        let freshValid = true;
        if (r.threadId === null) threadId = undefined;
        else if (r.threadId.kind === "json") {
          threadId = r.threadId.v;
          freshValid = false;
        } else {
          const c = r.threadId;
          const id = resolveId(c, st);
          // A fresh id is free (no 409 in the way of the answer we expect); others may exist.
          threadId = c.kind === "fresh" ? `${st.prefix}${c.s}-${st.fresh++}`.slice(0, 128) : id.value;
          freshValid = c.kind === "fresh";
        }
        const value: J = r.whole !== null ? r.whole : { ...r.extra, thread_id: threadId, metadata: r.metadata.v };
        const e = edge(r.edge, st, defaults, false, !!defaults.authorization);
        if (r.empty !== null) {
          const built = buildBody(undefined, r.parts, st);
          const body = Buffer.from(r.empty);
          return finish("threads.create.empty", "POST", "/threads", e, defaults, { built: { ...built, body, nonEmpty: body.length > 0, input: [r.empty] }, route: true });
        }
        const built = buildBody(value, r.parts, st);
        let expect: Expectation | undefined;
        const metaOnly = r.whole === null && freshValid && built.plainJson && (r.parts.mode === "json" || r.parts.mode === "chunked") && Object.keys(r.extra).length === 0;
        // (The body is optional here: whitespace alone may count as none.)
        if (built.plainJson && built.invalidJson && built.nonEmpty && !/^\s*$/.test(built.input.at(-1) ?? "")) expect = { status: 400, code: "invalid_request", why: "body is not JSON" };
        else if (metaOnly && r.metadata.kind === "oversize") expect = { status: 400, code: "invalid_request", why: "metadata over 8 KiB" };
        else if (metaOnly && r.metadata.kind === "deep") expect = { status: 400, code: "invalid_request", why: "metadata over 32 levels deep" };
        else if (metaOnly && r.metadata.kind === "ok") expect = { status: 201, why: "valid thread" };
        return finish(`threads.create.${r.metadata.kind}.${r.parts.mode}`, "POST", "/threads", e, defaults, { built, expect, route: true });
      },
    }),
  );

const UNKNOWN_PATHS = [
  "/", "/thread", "/threads/", "/threads//runs", "/threads/a/b/c", "/threads/a/runs/x", "/threads/a/RUNS", "/THREADS", "/../etc/passwd", "/..%2f..%2fetc%2fpasswd",
  "/%2e%2e/%2e%2e/etc/passwd", "//threads", "/threads/a/stream/../audit", "/approvals/x", "/me/", "/healthz/x", "/api", "/admin", "/.env", "/.git/config",
  "/index.html", "/static/../../package.json", "/app.js", "/%00", "/threads/%00/runs", "/\u00ff", "/favicon.ico", "/openapi.json/x", "/metrics/../me",
  "*", "/threads?limit=1", "/threads/x/resume/", "/threads/x/cancel/x",
];
const unknownArb: fc.Arbitrary<Spec> = fc
  .record({
    path: fc.oneof(fc.constantFrom(...UNKNOWN_PATHS), fc.string({ maxLength: 30 }).map((s) => "/" + s), nastyString.map((s) => "/threads/x/" + s)),
    method: fc.constantFrom("GET", "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND"),
    body: fc.option(wrongType, { freq: 3 }),
    parts: bodyPartsArb,
    edge: edgeArb,
  })
  .map(
    (r): Spec => ({
      family: "unknown",
      build(st, defaults) {
        const path = nodeSafe(r.path.startsWith("/") || r.path === "*" ? r.path : "/" + r.path);
        // The page and its static files need no token: no 401 is certain here.
        const e = edge(r.edge, st, defaults, false, false);
        const built = r.body !== null && r.method !== "GET" && r.method !== "HEAD" ? buildBody(r.body, r.parts, st) : undefined;
        return finish(`unknown.${r.method}`, r.method, path, e, defaults, { built });
      },
    }),
  );


// ---------------------------------------------------------------------------------------------
// Sending and checking

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  sse: boolean;
  error?: string;
  /** The error came on a kept-alive socket the server may have closed meanwhile: worth one retry. */
  reused?: boolean;
  /** An outcome that is not a status but not a failure either, counted under this name. */
  note?: string;
}

const BODY_CAP = 16 * 1024 * 1024;
const ignore = () => {};

/**
 * Sends once; a connection error on a reused keep-alive socket (the server closed it between two
 * requests: not this request's fault) is retried once on a fresh connection.
 */
async function send(url: URL, agent: http.Agent, r: Req, timeoutMs: number, stats?: { retried: number }): Promise<Res> {
  let res = await sendOnce(url, agent, r, timeoutMs);
  if (res.error && res.reused && !res.error.startsWith("no answer")) {
    if (stats) stats.retried++;
    res = await sendOnce(url, false, r, timeoutMs);
  }
  // Node answers a request head over 16 KiB with 431 and drops the connection at once; while the
  // client is still writing that head, the drop arrives as a reset before the 431 can be read.
  const head = r.path.length + Object.entries(r.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  if (res.error && /ECONNRESET|EPIPE/.test(res.error) && head > 16 * 1024) return { ...res, error: undefined, note: "reset (head over 16 KiB)" };
  // A body the server refuses before reading it (not JSON: 415; over the 256 KiB limit) is left
  // unread; when the answer goes out while a large one is still being written, the connection's
  // close arrives as a reset before the answer can be read.
  const bodyBytes = r.body === undefined ? 0 : Buffer.byteLength(r.body);
  if (res.error && /ECONNRESET|EPIPE/.test(res.error) && bodyBytes > 256 * 1024) return { ...res, error: undefined, note: "reset (body over 256 KiB)" };
  return res;
}

function sendOnce(url: URL, agent: http.Agent | false, r: Req, timeoutMs: number): Promise<Res> {
  if (r.raw) return sendRaw(url, r, timeoutMs);
  return new Promise((resolve) => {
    let settled = false;
    const done = (res: Res) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(res);
    };
    let req: http.ClientRequest;
    try {
      const headers = { ...r.headers };
      if (r.body && !r.chunked) headers["content-length"] = String(r.body.length);
      // Node frames a body in chunks by itself only for POST-like methods: say so for all.
      if (r.body && r.chunked) headers["transfer-encoding"] = "chunked";
      req = http.request({ agent, hostname: url.hostname, port: url.port, method: r.method, path: r.path, headers, setHost: headers.host === undefined });
    } catch (err) {
      done({ status: -1, headers: {}, body: Buffer.alloc(0), sse: false, error: `client refused to send: ${(err as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      done({ status: 0, headers: {}, body: Buffer.alloc(0), sse: false, error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    // A late EPIPE (the server answered early and closed while a big body was still being
    // written) can land after the client has let go of the socket: it must not kill the fuzzer.
    req.on("socket", (socket) => {
      if (!socket.listeners("error").includes(ignore)) socket.on("error", ignore);
    });
    req.on("error", (err) =>
      done({ status: 0, headers: {}, body: Buffer.alloc(0), sse: false, error: `connection error: ${(err as NodeJS.ErrnoException).code ?? err.message}`, reused: req.reusedSocket }),
    );
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const sse = String(res.headers["content-type"] ?? "").includes("text/event-stream");
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (sse || size > BODY_CAP) {
          // SSE: the first chunk is enough; drop the stream (what a disconnecting client does).
          res.destroy();
          done({ status, headers: res.headers, body: Buffer.concat(chunks), sse });
        }
      });
      res.on("end", () => done({ status, headers: res.headers, body: Buffer.concat(chunks), sse }));
      res.on("error", () => done({ status, headers: res.headers, body: Buffer.concat(chunks), sse, error: sse ? undefined : "response cut off" }));
      res.on("close", () => done({ status, headers: res.headers, body: Buffer.concat(chunks), sse, error: res.complete || sse ? undefined : "response cut off" }));
    });
    if (r.body && r.chunked) {
      const half = Math.floor(r.body.length / 2);
      req.write(r.body.subarray(0, half));
      req.end(r.body.subarray(half));
    } else req.end(r.body);
  });
}

/** Writes `r.raw` on a fresh socket, half-closes it, and parses the first response off the wire. */
function sendRaw(url: URL, r: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const sock = net.connect(Number(url.port), url.hostname, () => sock.end(r.raw!));
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      const all = Buffer.concat(chunks);
      if (error && all.length === 0) return resolve({ status: 0, headers: {}, body: Buffer.alloc(0), sse: false, error });
      if (all.length === 0) {
        return resolve(r.silenceOk ? { status: 0, headers: {}, body: Buffer.alloc(0), sse: false, note: "closed without an answer (allowed)" } : { status: 0, headers: {}, body: Buffer.alloc(0), sse: false, error: "closed without an answer" });
      }
      resolve(parseRawResponse(all));
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    sock.on("data", (c: Buffer) => {
      chunks.push(c);
      const text = Buffer.concat(chunks).toString("latin1");
      // One full response is enough (an SSE one: its head and first bytes).
      const parsed = parseRawResponse(Buffer.concat(chunks));
      if (parsed.sse && parsed.body.length > 0) finish();
      else if (!parsed.error && /\r\n\r\n/.test(text) && rawComplete(text)) finish();
    });
    sock.on("error", (e: NodeJS.ErrnoException) => finish(`connection error: ${e.code ?? e.message}`));
    sock.on("close", () => finish());
  });
}

function rawComplete(text: string): boolean {
  const head = text.slice(0, text.indexOf("\r\n\r\n"));
  const body = text.slice(head.length + 4);
  const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (len) return body.length >= Number(len[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return /(^|\r\n)0\r\n\r\n/.test(body);
  return false;
}

function parseRawResponse(all: Buffer): Res {
  const text = all.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!m || end < 0) return { status: 0, headers: {}, body: Buffer.alloc(0), sse: false, error: `not an HTTP response: ${JSON.stringify(text.slice(0, 80))}` };
  const headers: http.IncomingHttpHeaders = {};
  for (const line of text.slice(0, end).split("\r\n").slice(1)) {
    const i = line.indexOf(":");
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = all.subarray(end + 4);
  if (headers["content-length"] !== undefined) body = body.subarray(0, Number(headers["content-length"]));
  else if (/chunked/i.test(String(headers["transfer-encoding"] ?? ""))) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const nl = body.indexOf("\r\n", at, "latin1");
      if (nl < 0) break;
      const size = parseInt(body.subarray(at, nl).toString("latin1"), 16);
      if (!Number.isFinite(size) || size === 0) break;
      parts.push(body.subarray(nl + 2, nl + 2 + size));
      at = nl + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  return { status: Number(m[1]), headers, body, sse: String(headers["content-type"] ?? "").includes("text/event-stream") };
}

/** Malformed HTTP on a raw socket: what Node's parser and the edge make of it. */
interface RawCase {
  name: string;
  /** `own` is the Host the server was reached by. */
  text(own: string): string | Buffer;
  expect?: Expectation;
  silenceOk?: boolean;
}
const RAW_CASES: RawCase[] = [
  { name: "http1.0-no-host", text: () => "GET /me HTTP/1.0\r\n\r\n", expect: { status: 400, code: "invalid_host", why: "no Host at all is not an allowed Host" } },
  { name: "http1.0-no-host-post", text: () => 'POST /threads HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', expect: { status: 400, code: "invalid_host", why: "no Host at all is not an allowed Host" } },
  { name: "http1.1-no-host", text: () => "GET /me HTTP/1.1\r\nConnection: close\r\n\r\n", expect: { status: 400, why: "HTTP/1.1 needs a Host" } },
  { name: "empty-host", text: () => "GET /me HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n", expect: { status: 400, code: "invalid_host", why: "an empty Host is not allowed" } },
  { name: "two-hosts", text: (own) => `GET /me HTTP/1.1\r\nHost: ${own}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`, expect: { status: 400, why: "two Hosts" } },
  { name: "absolute-form-foreign", text: (own) => `GET http://evil.example/me HTTP/1.1\r\nHost: ${own}\r\nConnection: close\r\n\r\n` },
  { name: "absolute-form-own", text: (own) => `GET http://${own}/me HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`, expect: { status: 400, code: "invalid_host", why: "Host evil.example" } },
  { name: "two-content-lengths", text: (own) => `POST /threads HTTP/1.1\r\nHost: ${own}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{}`, expect: { status: 400, why: "ambiguous length" } },
  { name: "te-and-cl", text: (own) => `POST /threads HTTP/1.1\r\nHost: ${own}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, expect: { status: 400, why: "smuggling shape" } },
  { name: "bad-chunk-size", text: (own) => `POST /threads HTTP/1.1\r\nHost: ${own}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n` },
  { name: "short-content-length", text: (own) => `POST /threads HTTP/1.1\r\nHost: ${own}\r\nContent-Type: application/json\r\nContent-Length: 1\r\nConnection: close\r\n\r\n{}` },
  { name: "long-content-length", text: (own) => `POST /threads/x/runs HTTP/1.1\r\nHost: ${own}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{"message":"hi"}`, silenceOk: true },
  { name: "nul-in-header", text: (own) => `GET /me HTTP/1.1\r\nHost: ${own}\r\nX-A: a\u0000b\r\nConnection: close\r\n\r\n` },
  { name: "obs-fold", text: (own) => `GET /me HTTP/1.1\r\nHost: ${own}\r\nX-A: a\r\n b\r\nConnection: close\r\n\r\n` },
  { name: "lf-only", text: (own) => `GET /me HTTP/1.1\nHost: ${own}\nConnection: close\n\n` },
  { name: "unknown-method", text: (own) => `BREW /me HTTP/1.1\r\nHost: ${own}\r\nConnection: close\r\n\r\n` },
  { name: "http2-preface", text: () => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" },
  { name: "http0.9", text: () => "GET /me\r\n\r\n" },
  { name: "http9.9", text: (own) => `GET /me HTTP/9.9\r\nHost: ${own}\r\n\r\n` },
  { name: "options-star", text: (own) => `OPTIONS * HTTP/1.1\r\nHost: ${own}\r\nConnection: close\r\n\r\n` },
  { name: "raw-utf8-path", text: (own) => Buffer.from(`GET /threads/\u00e9\u{1F600}/audit HTTP/1.1\r\nHost: ${own}\r\nConnection: close\r\n\r\n`, "utf8") },
  { name: "space-in-path", text: (own) => `GET /threads/a b HTTP/1.1\r\nHost: ${own}\r\nConnection: close\r\n\r\n` },
  { name: "many-headers", text: (own) => `GET /me HTTP/1.1\r\nHost: ${own}\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${i}\r\n`).join("")}Connection: close\r\n\r\n` },
  { name: "pipelined", text: (own) => `GET /me HTTP/1.1\r\nHost: ${own}\r\n\r\nGET /threads/%2e%2e HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n` },
  { name: "garbage", text: () => "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003 TLS hello?\r\n\r\n" },
  { name: "cancel-no-body-chunked", text: (own) => `POST /threads/x/cancel HTTP/1.1\r\nHost: ${own}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n` },
  { name: "json-body-no-type", text: (own) => `POST /threads HTTP/1.1\r\nHost: ${own}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, expect: { status: 415, code: "unsupported_media_type", why: "a body without Content-Type" } },
];

const rawArb: fc.Arbitrary<Spec> = fc.nat(RAW_CASES.length - 1).map(
  (i): Spec => ({
    family: `raw.${RAW_CASES[i]!.name}`,
    build(st, defaults) {
      const c = RAW_CASES[i]!;
      let t = c.text(st.host);
      // The caller's own headers (a token, when auth is on) go right after the request line.
      const own = Object.entries(defaults).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      if (own && typeof t === "string" && / HTTP\/1\.[01]\r\n/.test(t)) t = t.replace(/\r\n/, `\r\n${own}`);
      const raw = typeof t === "string" ? Buffer.from(t, "latin1") : t;
      const line = raw.subarray(0, Math.max(0, raw.indexOf("\r\n"))).toString("latin1");
      return { method: "RAW", path: `${c.name}: ${JSON.stringify(line)}`, headers: {}, raw, expect: c.expect, silenceOk: c.silenceOk, input: [raw.toString("latin1")] };
    },
  }),
);

/** One fuzz request of any kind. */
export const requestArb: fc.Arbitrary<Spec> = fc.oneof(
  { weight: 3, arbitrary: createThreadArb },
  { weight: 2, arbitrary: threadsListArb },
  { weight: 5, arbitrary: getArb },
  { weight: 5, arbitrary: runsArb },
  { weight: 2, arbitrary: cleanRunArb },
  { weight: 5, arbitrary: resumeArb },
  { weight: 3, arbitrary: cleanResumeArb },
  { weight: 2, arbitrary: cancelArb },
  { weight: 2, arbitrary: unknownArb },
  { weight: 1, arbitrary: rawArb },
);

const MAX_MESSAGE = 400;
const ECHO_RUN = 201;
const RETRY_503 = new Set(["overloaded", "storage_unavailable", "shutting_down"]);

/** The contract's checks on one answer; each broken rule is one string. */
function check(r: Req, res: Res): string[] {
  const problems: string[] = [];
  if (res.error) return [res.error.startsWith("client refused") ? "fuzzer: " + res.error : res.error];
  const ct = String(res.headers["content-type"] ?? "");
  const text = res.body.toString("utf8");
  let json: unknown;
  let parsed = false;
  if (res.body.length > 0 && !res.sse) {
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      /* judged below */
    }
  }
  if (res.status >= 500) {
    if (res.status !== 503) problems.push(`status ${res.status}`);
    else if (!res.headers["retry-after"]) problems.push("503 without Retry-After");
    const code = parsed ? (json as { error?: { code?: unknown } })?.error?.code : undefined;
    if (res.status === 503 && r.path !== "/healthz" && parsed && !RETRY_503.has(String(code))) problems.push(`503 with code ${String(code)}`);
  }
  if (res.status === 429 && !res.headers["retry-after"]) problems.push("429 without Retry-After");
  if (res.status === 401 && !/^Bearer/i.test(String(res.headers["www-authenticate"] ?? ""))) problems.push("401 without WWW-Authenticate: Bearer");
  const isHealthz = r.path.split("?")[0] === "/healthz";
  if ((res.status < 200 || res.status >= 300) && res.body.length > 0 && !(isHealthz && res.status === 503)) {
    if (!parsed) problems.push(`non-2xx body is not JSON (content-type ${ct || "none"})`);
    else if (!/application\/json/i.test(ct)) problems.push(`error body served as ${ct || "no content-type"}`);
    if (parsed) {
      const j = json as Record<string, unknown>;
      const err = j?.error as Record<string, unknown> | undefined;
      const shapeOk =
        j !== null && typeof j === "object" && !Array.isArray(j) && Object.keys(j).length === 1 && err !== null && typeof err === "object" && !Array.isArray(err) &&
        Object.keys(err).sort().join(",") === "code,message" && typeof err.code === "string" && err.code !== "" && typeof err.message === "string";
      if (!shapeOk) problems.push("error body is not exactly {error:{code,message}}");
      const message = typeof err?.message === "string" ? err.message : "";
      if (message.length > MAX_MESSAGE) problems.push(`error message longer than ${MAX_MESSAGE} characters`);
      if (message.length >= ECHO_RUN && echoes(message, r.input)) problems.push(`error message echoes ${ECHO_RUN}+ characters of the input`);
    }
  }
  if (!/^\/(threads|approvals|me)\b/.test(r.path) && res.status === 200 && /root:x:0:0|"name":\s*"tollgate"|\[core\]|OPENAI_API_KEY/.test(text)) problems.push("served a file from outside the page");
  if (/\n\s+at .+:\d+:\d+\)?/.test(text)) problems.push("stack trace in the response");
  const codeSeen = r.method !== "HEAD";
  const gotCode = (json as { error?: { code?: string } } | undefined)?.error?.code;
  const matches = (x: { status: number; code?: string }) => res.status === x.status && (!codeSeen || x.code === undefined || gotCode === x.code);
  if (r.expect && !matches(r.expect) && !(r.expect.or ?? []).some(matches)) {
    const got = parsed ? `${res.status} ${(json as { error?: { code?: string } })?.error?.code ?? ""}`.trim() : String(res.status);
    const alts = [r.expect, ...(r.expect.or ?? [])].map((x) => `${x.status}${x.code ? " " + x.code : ""}`).join(" or ");
    problems.push(`expected ${alts} (${r.expect.why}), got ${got}`);
  }
  return problems;
}

function echoes(message: string, input: string[]): boolean {
  for (let i = 0; i + ECHO_RUN <= message.length; i++) {
    const piece = message.slice(i, i + ECHO_RUN);
    if (input.some((s) => s.length >= ECHO_RUN && s.includes(piece))) return true;
  }
  return false;
}

/** Groups failures by their rule, with the numbers and lengths that vary taken out. */
function reasonKey(problem: string, family: string): string {
  return `${problem.replace(/\d{4,}/g, "N")} [${family.split(".")[0]}]`;
}

function describeReq(r: Req, index: number, seed: number): string {
  if (r.raw) return `#${index} (seed ${seed}) raw ${r.path} (${r.raw.length} B): ${JSON.stringify(r.raw.subarray(0, 300).toString("latin1"))}`;
  const body = r.body ? r.body.subarray(0, 300).toString("latin1") : "";
  const headers = Object.entries(r.headers)
    .map(([k, v]) => `${k}: ${v.length > 80 ? v.slice(0, 80) + `…(${v.length})` : v}`)
    .join("; ");
  return `#${index} (seed ${seed}) ${r.method} ${r.path.length > 200 ? r.path.slice(0, 200) + `…(${r.path.length})` : r.path} [${headers}]${r.body ? ` body(${r.body.length} B${r.chunked ? ", chunked" : ""}): ${JSON.stringify(body)}${r.body.length > 300 ? "…" : ""}` : ""}`;
}

function describeRes(res: Res): string {
  if (res.error) return res.error;
  const t = res.body.subarray(0, 500).toString("utf8");
  return `${res.status} ${res.headers["content-type"] ?? ""} ${JSON.stringify(t)}${res.body.length > 500 ? `…(${res.body.length} B)` : ""}`;
}

// ---------------------------------------------------------------------------------------------
// The runner

const CHUNK = 64;
const FAILURES_PER_REASON = 5;

/** Sends `requests` fuzz requests (plus maintenance) and returns the figures. Never throws for a failed check. */
export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const url = new URL(o.baseUrl);
  const concurrency = o.concurrency ?? 16;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const defaults = Object.fromEntries(Object.entries(o.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency + 4 });
  const prefix = `fz${o.seed}x${Date.now().toString(36)}-`;
  const st: State = {
    origin: `${url.protocol}//${url.host}`,
    host: url.host,
    prefix,
    targets: Array.from({ length: o.targets ?? 4 }, (_, i) => ({ id: `${prefix}t${i}`, callIds: [], stale: [], cycles: 0, generation: 0 })),
    known: [],
    runIds: [],
    realCalls: new Set(),
    fresh: 0,
  };
  const report: FuzzReport = {
    seed: o.seed,
    requests: 0,
    maintenanceRequests: 0,
    byStatus: {},
    byFamily: {},
    statusByEndpoint: {},
    failureCount: 0,
    failuresByReason: {},
    failures: [],
    expectations: { checked: 0, met: 0 },
    retriedOnFreshConnection: 0,
    targets: [],
    durationMs: 0,
    requestsPerSecond: 0,
  };
  const started = Date.now();

  const record = (index: number, family: string, r: Req, res: Res) => {
    const problems = check(r, res);
    if (r.expect) {
      report.expectations.checked++;
      if (!problems.some((p) => p.startsWith("expected "))) report.expectations.met++;
    }
    for (const p of problems) {
      const key = reasonKey(p, family);
      report.failureCount++;
      const seen = (report.failuresByReason[key] = (report.failuresByReason[key] ?? 0) + 1);
      if (seen <= FAILURES_PER_REASON) report.failures.push({ index, family, reason: p, request: describeReq(r, index, o.seed), response: describeRes(res) });
    }
    // Learn from the answer: threads that exist, run ids to replay from.
    if (res.sse) {
      const m = /^id: (.+):\d+$/m.exec(res.body.toString("utf8"));
      if (m && !st.runIds.includes(m[1]!)) st.runIds.push(m[1]!), st.runIds.length > 64 && st.runIds.shift();
      const id = /^\/threads\/([A-Za-z0-9_-]{1,128})\//.exec(r.path)?.[1];
      if (id && !st.known.includes(id)) st.known.push(id), st.known.length > 256 && st.known.shift();
    } else if (res.status === 201) {
      try {
        const id = (JSON.parse(res.body.toString("utf8")) as { thread_id?: string }).thread_id;
        if (id) st.known.push(id), st.known.length > 256 && st.known.shift();
      } catch {
        /* not ours to judge here */
      }
    }
  };

  // Keeps the targets waiting at an open interrupt, and learns their ids. Its requests are valid
  // ones, checked like the rest.
  let maintIndex = -1;
  const maintain = async () => {
    for (const t of st.targets) {
      const get: Req = { method: "GET", path: `/threads/${t.id}`, headers: { ...defaults }, input: [] };
      const res = await send(url, agent, get, timeoutMs);
      report.maintenanceRequests++;
      record(maintIndex--, "maintenance", get, res);
      let view: { status?: string; pending?: { interrupt_id: string; calls: Array<{ call_id: string }> } | null } | undefined;
      try {
        view = res.status === 200 ? JSON.parse(res.body.toString("utf8")) : undefined;
      } catch {
        view = undefined;
      }
      if (view?.pending) {
        if (t.interruptId && t.interruptId !== view.pending.interrupt_id) t.stale.push(t.interruptId), t.stale.length > 16 && t.stale.shift();
        t.interruptId = view.pending.interrupt_id;
        t.callIds = view.pending.calls.map((c) => c.call_id);
        for (const c of t.callIds) st.realCalls.add(c);
      } else if (res.status === 404 || view?.status === "idle") {
        if (t.interruptId) t.stale.push(t.interruptId), t.stale.length > 16 && t.stale.shift();
        t.interruptId = undefined;
        // A long history makes every model call and checkpoint bigger: move on to a new thread
        // now and then (the old one stays in play as a known thread).
        if (++t.cycles > 20) {
          st.known.push(t.id);
          t.id = `${prefix}t${st.targets.indexOf(t)}g${++t.generation}`;
          t.cycles = 0;
        }
        const run: Req = {
          method: "POST",
          path: `/threads/${t.id}/runs`,
          headers: { ...defaults, "content-type": "application/json" },
          body: Buffer.from(JSON.stringify({ message: "please email the customer", on_disconnect: "continue" })),
          input: [],
        };
        report.maintenanceRequests++;
        record(maintIndex--, "maintenance", run, await send(url, agent, run, timeoutMs));
      }
    }
  };

  await maintain();
  // Let the first interrupts open before the attack starts.
  for (let i = 0; i < 50 && st.targets.some((t) => !t.interruptId); i++) {
    await new Promise((r) => setTimeout(r, 100));
    await maintain();
  }

  let next = 0;
  let chunkIndex = -1;
  let chunk: Spec[] = [];
  const specAt = (i: number): Spec => {
    const c = Math.floor(i / CHUNK);
    if (c !== chunkIndex) {
      chunk = fc.sample(requestArb, { seed: (o.seed * 1_000_003 + c) | 0, numRuns: CHUNK });
      chunkIndex = c;
    }
    return chunk[i % CHUNK]!;
  };
  // Specs are drawn in order (chunk by chunk), so a seed always gives the same sequence.
  const specs = new Map<number, Spec>();
  const take = (): number | undefined => {
    if (next >= o.requests) return undefined;
    const i = next++;
    specs.set(i, specAt(i));
    return i;
  };

  let finished = false;
  const maintenance = (async () => {
    while (!finished) {
      await new Promise((r) => setTimeout(r, 250));
      if (!finished) await maintain();
    }
  })();

  const every = o.progressEvery ?? 1000;
  const worker = async () => {
    for (let i = take(); i !== undefined; i = take()) {
      const spec = specs.get(i)!;
      specs.delete(i);
      let r: Req;
      try {
        r = spec.build(st, defaults);
      } catch (err) {
        report.failureCount++;
        report.failures.push({ index: i, family: spec.family, reason: `fuzzer: could not build request: ${(err as Error).message}`, request: "", response: "" });
        continue;
      }
      const family = r.family ?? spec.family;
      const stats = { retried: 0 };
      const res = await send(url, agent, r, timeoutMs, stats);
      report.retriedOnFreshConnection += stats.retried;
      report.requests++;
      const status = String(res.status || res.note || "no answer");
      report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
      report.byFamily[family] = (report.byFamily[family] ?? 0) + 1;
      const endpoint = (report.statusByEndpoint[family.split(".")[0]!] ??= {});
      endpoint[status] = (endpoint[status] ?? 0) + 1;
      record(i, family, r, res);
      if (report.requests % every === 0) o.onProgress?.({ done: report.requests, total: o.requests, failures: report.failureCount, elapsedMs: Date.now() - started });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  finished = true;
  await maintenance;
  agent.destroy();

  report.targets = st.targets.map((t) => t.id);
  report.durationMs = Date.now() - started;
  report.requestsPerSecond = Math.round((report.requests / report.durationMs) * 1000);
  o.onProgress?.({ done: report.requests, total: o.requests, failures: report.failureCount, elapsedMs: report.durationMs });
  return report;
}

/** One line per failure reason with its count, then the examples: what a failing test prints. */
export function formatFailures(report: FuzzReport): string {
  const lines = [`seed ${report.seed}: ${report.failureCount} failed checks over ${report.requests} requests`];
  for (const [reason, n] of Object.entries(report.failuresByReason).sort((a, b) => b[1] - a[1])) lines.push(`  ${n} × ${reason}`);
  lines.push("examples:");
  for (const f of report.failures.slice(0, 60)) lines.push(`- ${f.reason}\n    ${f.request}\n    → ${f.response}`);
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// After the storm

export interface AfterChecks {
  healthz: number;
  /** The terminal event of a plain message on a fresh thread. */
  freshRun: string;
  /** Each target, cancelled and sent a plain message: its terminal events. */
  targetRuns: string[];
}

/** `/healthz`, a normal run on a fresh thread, and each target thread still usable. */
export async function afterChecks(baseUrl: string, targets: string[] = [], headers: Record<string, string> = {}): Promise<AfterChecks> {
  const token = /^Bearer (.+)$/.exec(headers.authorization ?? headers.Authorization ?? "")?.[1];
  const client = new TollgateClient({ baseUrl, token });
  const healthz = (await fetch(baseUrl + "/healthz")).status;
  const terminalOf = async (id: string, message: string) => {
    const events = await client.run(id, message).collect();
    return events.at(-1)?.type ?? "none";
  };
  const freshRun = await terminalOf(`fuzz-after-${Date.now().toString(36)}`, "hello after the fuzz");
  const targetRuns: string[] = [];
  for (const id of targets) {
    await client.cancel(id);
    targetRuns.push(await terminalOf(id, "hello again"));
  }
  return { healthz, freshRun, targetRuns };
}

// ---------------------------------------------------------------------------------------------
// npm run fuzz

if (import.meta.url === `file://${process.argv[1]}`) {
  const { startFakeOpenAI } = await import("../test/helpers/fake-openai.js");
  const { startServer } = await import("../test/helpers/server-process.js");
  const { openDb } = await import("../test/helpers/sqlite.js");
  const requests = Number(process.env.FUZZ_REQUESTS ?? 100_000);
  const seed = Number(process.env.FUZZ_SEED ?? 1);
  const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 16);
  const model = await startFakeOpenAI({ script: fuzzModelScript });
  const server = await startServer({ MODEL: "fake-model", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.url, TOLLGATE_TEST_TOOLS: "1" });
  let exit = 1;
  try {
    console.log(`fuzzing ${server.url}: ${requests} requests, seed ${seed}, ${concurrency} in flight`);
    const report = await runFuzz({
      baseUrl: server.url,
      requests,
      seed,
      concurrency,
      onProgress: (p) => console.log(`  ${p.done}/${p.total} requests, ${p.failures} failed checks, ${Math.round(p.elapsedMs / 1000)} s`),
      progressEvery: 5_000,
    });
    const after = await afterChecks(server.url, report.targets);
    const db = openDb(server.dataDir);
    const rows = { refunds: db.countRows("refunds"), outbox: db.countRows("outbox") };
    db.close();
    const log = server.stderr() + server.stdout();
    // JSON log lines carry a stack as an escaped string (`\n    at …`).
    const stackTraces = (log.match(/(\n|\\n)\s+at .+:\d+:\d+\)?/g) ?? []).length;
    if (report.failureCount > 0) console.log(formatFailures(report));
    console.log(JSON.stringify({ ...report, failures: undefined, after, rows, stackTraces, serverLogBytes: log.length }, null, 2));
    const ok =
      report.failureCount === 0 && after.healthz === 200 && after.freshRun === "done" && after.targetRuns.every((t) => t === "done") && rows.refunds === 0 && rows.outbox === 0 && stackTraces === 0;
    console.log(
      `${report.requests} requests (+${report.maintenanceRequests} maintenance) in ${(report.durationMs / 1000).toFixed(1)} s, ${report.requestsPerSecond} requests/s; ` +
        `by status ${JSON.stringify(report.byStatus)}; ${report.failureCount} failed checks; refunds ${rows.refunds}, outbox ${rows.outbox}; ` +
        `healthz ${after.healthz}, fresh run ${after.freshRun}; ${ok ? "OK" : `FAILED (seed ${seed})`}`,
    );
    exit = ok ? 0 : 1;
  } finally {
    await server.kill();
    await model.close();
  }
  process.exit(exit);
}
