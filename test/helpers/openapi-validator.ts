import { z } from "zod";

type Json = unknown;

/** The value a JSON pointer (`#/components/schemas/X`) names in `doc`, or undefined. */
export function resolvePointer(doc: Json, ref: string): Json {
  if (!ref.startsWith("#/")) return undefined;
  let at: Json = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!at || typeof at !== "object" || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, Json>)[key];
  }
  return at;
}

/** Every `$ref` anywhere in `doc`, with where it sits. */
export function allRefs(doc: Json): Array<{ at: string; ref: string }> {
  const out: Array<{ at: string; ref: string }> = [];
  const walk = (v: Json, at: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}/${i}`));
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "$ref" && typeof x === "string") out.push({ at, ref: x });
        else walk(x, `${at}/${k}`);
      }
    }
  };
  walk(doc, "#");
  return out;
}

/** `schema` with every `$ref` replaced by what it names in `doc` (the document's schemas are not recursive). */
function inline(doc: Json, schema: Json, depth = 0): Json {
  if (depth > 32) throw new Error("$ref cycle");
  if (Array.isArray(schema)) return schema.map((s) => inline(doc, s, depth));
  if (!schema || typeof schema !== "object") return schema;
  const { $ref, ...rest } = schema as Record<string, Json>;
  if (typeof $ref === "string") {
    const target = resolvePointer(doc, $ref);
    if (target === undefined) throw new Error(`unresolved $ref ${$ref}`);
    return inline(doc, { ...(target as object), ...rest }, depth + 1);
  }
  return Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(doc, v, depth)]));
}

/**
 * A checker built from the document's own JSON Schema (not from the code's zod schemas), so a
 * response that passes it fits what the published document says.
 */
export function schemaChecker(doc: Json, schema: Json): (value: unknown) => string | null {
  const zod = z.fromJSONSchema(inline(doc, schema) as Parameters<typeof z.fromJSONSchema>[0]);
  return (value) => {
    const r = zod.safeParse(value);
    return r.success ? null : r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
  };
}
