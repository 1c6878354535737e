import { MIN_SECRET_LENGTH, SCRUBBED, SecretMatcher } from "./secret-matcher.js";
import { createTokenFilter, type TokenFilter } from "./token-filter.js";

/**
 * Removes secrets from text before it leaves the process: the configured ones (the model API key,
 * every bearer token tollgate accepts) as exact substrings, and what looks like a credential
 * whatever its origin — a `Bearer <token>`, the value of an `Authorization` header, an
 * OpenAI-style key `sk-…`. Upstream errors echo such things (a 401 naming the key it refused);
 * every error message, event, stored row and log line goes through `scrub` first.
 */
export interface SecretScrubber {
  scrub(text: string): string;
  /**
   * Only the configured secrets, not what merely looks like a credential: for words that must stay
   * as they are unless they hold a real secret (a tool call's arguments, bound to its approval).
   */
  scrubExact(text: string): string;
  /**
   * A string field's value, scrubbed as its key makes it read: under `authorization` the value is a
   * credential (`{"authorization": "abc123"}`), which the value alone does not show.
   */
  scrubEntry(key: string, value: string): string;
  /** A filter that scrubs the configured secrets from one run's streamed tokens. */
  tokenFilter(): TokenFilter;
  /**
   * A copy of `value` with every string in it scrubbed: objects and arrays walked, an `Error`
   * turned into `{name, message, stack}` (its message and stack scrubbed too).
   */
  scrubDeep<T>(value: T): T;
}

// `Authorization: <value>` in a header dump, `"authorization": "<value>"` in JSON (escaped or
// not): the value is an optional scheme and a credential. A bare scheme (the `Bearer <token>` of
// a help text) is not a credential; `***` is not one either, so scrubbing twice changes nothing.
const AUTHORIZATION = /\b((?:proxy-)?authorization(?:\\?["'])?\s*[:=]\s*(?:\\?")?)((?:[A-Za-z][A-Za-z0-9-]*\s+)?[A-Za-z0-9\-._~+/=]+)/gi;
const AUTHORIZATION_KEY = /^(?:proxy-)?authorization$/i;
const SCHEME_ONLY = /^(?:bearer|basic|digest|token|negotiate|ntlm)$/i;
// `Bearer <RFC 6750 b64token>`, the whole token (not a prefix of it, not `realm="…"`).
const BEARER = /\b(bearer)\s+([A-Za-z0-9\-._~+/]+=*)(?![A-Za-z0-9\-._~+/="'])/gi;
// "a bearer token is required": a short lower-case word after "bearer" is prose, not a token.
const PROSE_WORD = /^[a-z]{1,15}$/;
// OpenAI-style keys (`sk-…`, `sk-proj-…`), not inside a longer word such as `task-…`.
const OPENAI_KEY = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{8,}/g;

const MAX_DEPTH = 16;

export function createSecretScrubber(secrets: readonly string[] = []): SecretScrubber {
  const given = secrets.filter((s) => typeof s === "string" && s.length >= MIN_SECRET_LENGTH);
  const matcher = given.length ? new SecretMatcher(given) : undefined;
  const exact = (text: string): string => (matcher && text ? matcher.scrub(text) : text);

  const scrub = (text: string): string => {
    if (!text) return text;
    let out = exact(text);
    out = out.replace(AUTHORIZATION, (m: string, head: string, value: string) => (SCHEME_ONLY.test(value) ? m : `${head}${SCRUBBED}`));
    out = out.replace(BEARER, (m: string, scheme: string, token: string) => (PROSE_WORD.test(token) ? m : `${scheme} ${SCRUBBED}`));
    return out.replace(OPENAI_KEY, SCRUBBED);
  };

  const scrubEntry = (key: string, value: string): string => {
    if (!AUTHORIZATION_KEY.test(key)) return scrub(value);
    const prefix = "authorization: ";
    return scrub(prefix + value).slice(prefix.length);
  };

  const deep = (value: unknown, depth: number, seen: WeakSet<object>): unknown => {
    if (typeof value === "string") return scrub(value);
    if (!value || typeof value !== "object") return value;
    if (seen.has(value)) return "[Circular]";
    if (depth >= MAX_DEPTH) return "[Too deep]";
    seen.add(value);
    try {
      if (value instanceof Error) {
        return { name: value.name, message: scrub(value.message), ...(value.stack ? { stack: scrub(value.stack) } : {}) };
      }
      if (Array.isArray(value)) return value.map((v) => deep(v, depth + 1, seen));
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") return deep(toJSON.call(value), depth + 1, seen); // a Date, as JSON shows it
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = typeof v === "string" ? scrubEntry(k, v) : deep(v, depth + 1, seen);
      return out;
    } finally {
      seen.delete(value);
    }
  };

  return {
    scrub,
    scrubExact: exact,
    scrubEntry,
    tokenFilter: () => createTokenFilter(matcher),
    scrubDeep: <T>(value: T): T => deep(value, 0, new WeakSet()) as T,
  };
}
