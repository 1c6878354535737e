import { type OutputUnit, Validator } from "@cfworker/json-schema";
import { interopSafeParseAsync, isInteropZodSchema } from "@langchain/core/utils/types";
import { formatIssues, type IssueLike } from "../protocol/index.js";

/**
 * Checks a call's arguments against its tool's schema, whatever kind it is: zod 3 or zod 4
 * (parsed as LangChain parses them), or JSON Schema (an MCP server's, or one a team wrote), which
 * zod cannot read. Returns the validation message, or null when the arguments fit.
 */
export async function checkArgs(schema: unknown, args: unknown): Promise<string | null> {
  if (isInteropZodSchema(schema)) {
    const parsed = await interopSafeParseAsync(schema as never, args);
    if (parsed.success) return null;
    const issues = (parsed.error as { issues?: IssueLike[] }).issues;
    return issues ? formatIssues(issues) : String(parsed.error);
  }
  return checkJsonSchema(schema, args);
}

/** One validator per schema object: a tool's schema does not change, and compiling it is not free. */
const validators = new WeakMap<object, Validator>();

/** Keywords whose error only says that something beneath them failed: the error beneath says what. */
const WRAPPERS: ReadonlySet<string> = new Set(["properties", "items", "prefixItems", "additionalItems", "patternProperties", "allOf", "$ref", "dependentSchemas", "unevaluatedProperties"]);

function checkJsonSchema(schema: unknown, args: unknown): string | null {
  // No schema at all accepts anything, as LangChain's own tools do.
  if (schema === undefined || schema === null) return null;
  if (typeof schema === "boolean") return schema ? null : "no arguments are accepted";
  if (typeof schema !== "object") return "the tool's schema is neither zod nor JSON Schema";
  let validator = validators.get(schema);
  if (!validator) {
    // Every error, not only the first: a person correcting an edit sees all that is wrong at once.
    validator = new Validator(schema as never, "2020-12", false);
    validators.set(schema, validator);
  }
  const result = validator.validate(args);
  if (result.valid) return null;
  return formatJsonSchemaErrors(result.errors);
}

/** The leaf errors as `path: message`, joined like zod's issues; the root's path is empty. */
function formatJsonSchemaErrors(errors: readonly OutputUnit[]): string {
  const leaves = errors.filter((e) => !WRAPPERS.has(e.keyword));
  const shown = leaves.length ? leaves : errors;
  const lines = shown.map((e) => {
    const where = e.instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodePointer).join(".");
    return where ? `${where}: ${e.error}` : e.error;
  });
  return [...new Set(lines)].join("; ");
}

/** A JSON Pointer segment as the key it names. */
const decodePointer = (s: string) => decodeURIComponent(s).replace(/~1/g, "/").replace(/~0/g, "~");
