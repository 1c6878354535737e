/**
 * What a store writes is scrubbed of secrets first: an upstream error that echoes the model's API
 * key or a bearer token reaches LangGraph's checkpoint writes (`__error__`, a tool message) and
 * the ledger's outcomes, and a database file or backup must not hold it. The store is given the
 * filter; which secrets there are is the caller's business.
 */
export interface SecretFilter {
  /** Configured secrets and whatever is shaped like a credential: for text nothing is bound to. */
  scrub(text: string): string;
  /**
   * Configured secrets only: for a tool call's arguments, which an approval's hash is bound to. A
   * shape that merely looks like a credential ("Authorization: granted") is the call's own words
   * and must run as approved; a configured secret in them is a leak, and the call then fails
   * closed (its stored arguments no longer match the approved hash).
   */
  scrubExact(text: string): string;
  /** A string field's value as its key makes it read (under `authorization`: a credential). */
  scrubEntry(key: string, value: string): string;
}

/** Stores nothing differently: for stores opened by tools and tests that hold no secrets. */
export const NO_SCRUB: SecretFilter = { scrub: (text) => text, scrubExact: (text) => text, scrubEntry: (_key, value) => value };

/**
 * `json` with every string in it (keys too) scrubbed, as valid JSON. The text is only parsed when
 * the scrub finds something in it, which almost no write does; scrubbing the text itself could
 * cut across JSON's syntax (a secret that is also a literal such as `true`).
 */
export function scrubJsonText(json: string, filter: SecretFilter): string {
  if (filter === NO_SCRUB || filter.scrub(json) === json) return json;
  return JSON.stringify(walk(JSON.parse(json), filter, { place: "free" }));
}

/**
 * Where a value sits: free text; an element of a `tool_calls`/`tool_call_chunks` list (a call);
 * or a call's arguments (`args`, and OpenAI's raw `function.arguments`), which are bound.
 */
type Place = "free" | "call" | "bound";

const CALL_LISTS = new Set(["tool_calls", "tool_call_chunks", "invalid_tool_calls"]);
const CALL_ARGUMENTS = new Set(["args", "function"]);
/** Ids key the ledger, decisions and history repairs: never cut by shape, wherever they are. */
const IDS = new Set(["id", "tool_call_id"]);

/** `at.key`: the key the value sits under in its object (none for a list element or the root). */
function walk(value: unknown, filter: SecretFilter, at: { place: Place; key?: string }): unknown {
  const { place, key } = at;
  if (typeof value === "string") {
    if (place === "bound" || (key !== undefined && IDS.has(key))) return filter.scrubExact(value);
    return key === undefined ? filter.scrub(value) : filter.scrubEntry(key, value);
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, filter, { place }));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const inner: Place = place === "bound" ? "bound" : CALL_LISTS.has(k) ? "call" : place === "call" && CALL_ARGUMENTS.has(k) ? "bound" : "free";
    const name = place === "bound" ? filter.scrubExact(k) : filter.scrub(k);
    // Defined as an own property: a key "__proto__" stays data, as JSON.parse made it.
    Object.defineProperty(out, name, { value: walk(v, filter, { place: inner, key: k }), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
