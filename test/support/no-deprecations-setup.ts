/**
 * Vitest setup file of both projects: a test fails when a deprecation warning was printed while it
 * ran, by a server it started (`startServer`, any backend) or by this test process itself (pg used
 * in-process by the store tests); see test/helpers/deprecation-watch.ts.
 *
 * Looked at after each test, and once more after the file's own `afterAll` (vitest runs after-hooks
 * in reverse order of registration; servers stopped there have printed everything by then). A
 * warning printed in a `beforeAll`, or late in one test, is reported by the next check; none is
 * missed. Only deprecations: any other warning is left to the suite that cares.
 */
import { afterAll, afterEach } from "vitest";
import { newDeprecations } from "../helpers/deprecation-watch.js";

async function failOnDeprecations(): Promise<void> {
  const found = await newDeprecations();
  if (found.length) throw new Error(`deprecation warnings on stderr:\n${found.join("\n")}`);
}

afterEach(failOnDeprecations);
afterAll(failOnDeprecations);
