/**
 * Tollgates in the test's own process, each on a temp data dir of its own with a silent log, and
 * closed and removed after every test of the file that calls `inProcessTollgates()`.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/logger.js";
import { createTollgate, type Tollgate, type TollgateOptions } from "../../src/index.js";

export interface InProcessOptions extends Omit<TollgateOptions, "config"> {
  /** Variables for `loadConfig` besides `DATA_DIR`. */
  env?: Record<string, string>;
}

/** Registers the cleanup (call it at the top of a file) and returns the opener. */
export function inProcessTollgates(): (options?: InProcessOptions) => Promise<Tollgate> {
  const open: Tollgate[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const tg of open.splice(0)) await tg.close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return async ({ env = {}, log = silentLogger, ...options } = {}) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-in-process-"));
    dirs.push(dataDir);
    const tg = await createTollgate({ config: loadConfig({ ...env, DATA_DIR: dataDir }), log, ...options });
    open.push(tg);
    return tg;
  };
}
