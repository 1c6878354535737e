/**
 * `npm run openapi`: writes docs/reference/openapi.json from the code. A test fails while the checked-in
 * file differs from what the code generates, so run this after changing a schema or an endpoint.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { LANGGRAPH_OPENAPI } from "../src/faces/langgraph/index.js";
import { buildOpenApiDocument } from "../src/faces/api/openapi.js";

export const OPENAPI_FILE = fileURLToPath(new URL("../docs/reference/openapi.json", import.meta.url));

/** The checked-in file's exact text: two-space JSON and a final newline. */
export const openApiText = () => `${JSON.stringify(buildOpenApiDocument(LANGGRAPH_OPENAPI), null, 2)}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  fs.writeFileSync(OPENAPI_FILE, openApiText());
  console.log(`wrote ${OPENAPI_FILE}`);
}
