import fs from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { checkGraphId, quote } from "./graph-id.js";
import { firstLine, graphError } from "./load-error.js";

/** One graph named in a graphs file: the export's value as imported (resolveGraphs makes it a graph). */
export interface GraphsFileEntry {
  value: unknown;
  description: string | null;
}

/** `./path.js:export`: a file, then an optional export name (an identifier, so `C:\…` stays a path). */
const SPEC = /^(.*?)(?::([A-Za-z_$][\w$]*))?$/;
const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;
/** What Node throws when it cannot load a TypeScript file by itself (20: unknown extension; 22+: syntax it cannot strip). */
const NO_TYPESCRIPT_CODES = new Set([
  "ERR_UNKNOWN_FILE_EXTENSION",
  "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX",
  "ERR_UNSUPPORTED_NODE_MODULES_TYPESCRIPT_TYPE_STRIPPING",
]);

/**
 * Reads a file in `langgraph.json`'s format, `{"graphs": {"<id>": "./path.js:export" | {"path":
 * "./path.js:export", "description": "…"}}}` (other keys are left to langgraph's own tools), and
 * imports each graph's export: paths are relative to the file's directory, and without
 * `:export` the default export is taken. Each value is returned as the module holds it.
 *
 * Throws a one-line error naming the graph, file and export when something is missing, and
 * saying a TypeScript loader such as `tsx` is needed when Node cannot import a `.ts` file.
 */
export async function loadGraphsFile(file: string): Promise<Record<string, GraphsFileEntry>> {
  const where = path.resolve(file);
  const graphs = await readGraphs(where);
  const loaded: Record<string, GraphsFileEntry> = {};
  for (const [graphId, entry] of Object.entries(graphs)) {
    checkGraphId(graphId);
    const { spec, description } = parseEntry(where, graphId, entry);
    loaded[graphId] = { value: await importExport(graphId, path.dirname(where), spec), description };
  }
  return loaded;
}

/** The file's `graphs` object; throws a one-line error on a missing file, bad JSON or no graphs. */
async function readGraphs(where: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(where, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`graphs file ${where} cannot be read: ${code === "ENOENT" ? "no such file" : firstLine(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`graphs file ${where} is not valid JSON: ${firstLine(err)}`);
  }
  const graphs = (json as { graphs?: unknown } | null)?.graphs;
  if (typeof graphs !== "object" || graphs === null || Array.isArray(graphs)) {
    throw new Error(`graphs file ${where} has no "graphs" object (expected {"graphs": {"<graph_id>": "./path.js:export"}})`);
  }
  if (!Object.keys(graphs).length) throw new Error(`graphs file ${where} names no graphs`);
  return graphs as Record<string, unknown>;
}

function parseEntry(where: string, graphId: string, entry: unknown): { spec: string; description: string | null } {
  if (typeof entry === "string" && entry) return { spec: entry, description: null };
  if (typeof entry === "object" && entry !== null) {
    const { path: spec, description } = entry as { path?: unknown; description?: unknown };
    if (typeof spec === "string" && spec && (description == null || typeof description === "string")) {
      return { spec, description: description ?? null };
    }
  }
  throw graphError(graphId, `${where} gives it neither "./path.js:export" nor {"path": "./path.js:export", "description": "…"}`);
}

/** Imports `spec`'s file (relative to `dir`) and returns the named export. */
async function importExport(graphId: string, dir: string, spec: string): Promise<unknown> {
  const [, relative = "", exportName = "default"] = SPEC.exec(spec)!;
  const file = path.resolve(dir, relative);
  const what = `${file} (export ${quote(exportName)})`;
  // Looked at first: a missing file should say so, not surface as the import's "module not found".
  const stat = await fs.stat(file).catch((err: NodeJS.ErrnoException) => err);
  if (stat instanceof Error) {
    throw graphError(graphId, stat.code === "ENOENT" ? `${what} does not exist` : `${what} cannot be read: ${firstLine(stat)}`);
  }
  if (!stat.isFile()) throw graphError(graphId, `${what} is not a file`);
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (err) {
    throw graphError(graphId, describeImportFailure(err, file));
  }
  if (!(exportName in mod)) {
    const names = Object.keys(mod).sort();
    const has = names.length ? `it exports ${names.slice(0, 10).join(", ")}${names.length > 10 ? ", …" : ""}` : "it exports nothing";
    throw graphError(graphId, `${file} has no export ${quote(exportName)} (${has})`);
  }
  return mod[exportName];
}

/**
 * Why importing `file` failed, in one line. A TypeScript file Node cannot load by itself gets
 * what to do about it (tollgate does not bring a TypeScript loader: the team's project does);
 * anything else, the first line of what the import threw.
 */
export function describeImportFailure(err: unknown, file: string): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (TYPESCRIPT.test(file) && typeof code === "string" && NO_TYPESCRIPT_CODES.has(code)) {
    return (
      `${file} is TypeScript, which Node cannot import by itself (${code}): ` +
      `add a TypeScript loader such as tsx to your project (npm install -D tsx) and start tollgate with it (node --import tsx …)`
    );
  }
  return `importing ${file} failed: ${firstLine(err)}`;
}
