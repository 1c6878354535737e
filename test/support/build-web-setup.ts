/** Vitest global setup: the server processes the tests start serve the page from dist/web. */
import { buildWeb } from "../../scripts/build-web.js";

export default async function setup(): Promise<void> {
  await buildWeb();
}
