/**
 * What a store writes is scrubbed of secrets first: an upstream error that echoes the model's API
 * key or a bearer token reaches LangGraph's checkpoint writes (`__error__`, a tool message) and
 * the ledger's outcomes, and a database file or backup must not hold it. The store is given the
 * scrub function; which secrets there are is the caller's business.
 */
export type Scrub = (text: string) => string;

/** Stores nothing differently: for stores opened by tools and tests that hold no secrets. */
export const NO_SCRUB: Scrub = (text) => text;

/**
 * `json` with every string in it (keys too) scrubbed, as valid JSON. The text is only parsed when
 * the scrub finds something in it, which almost no write does; scrubbing the text itself could
 * cut across JSON's syntax (a secret that is also a literal such as `true`).
 */
export function scrubJsonText(json: string, scrub: Scrub): string {
  if (scrub === NO_SCRUB || scrub(json) === json) return json;
  return JSON.stringify(scrubValue(JSON.parse(json), scrub));
}

function scrubValue(value: unknown, scrub: Scrub): unknown {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, scrub));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Defined as an own property: a key "__proto__" stays data, as JSON.parse made it.
    Object.defineProperty(out, scrub(k), { value: scrubValue(v, scrub), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
