/**
 * Every server `startServer` started in this test process, so a check that must hold for all of
 * them (test/helpers/deprecation-watch.ts) is written once instead of in each suite. A module
 * of its own: the check loads it in every test file, and it must not pull in pg or child_process.
 */
import type { ChildProcess } from "node:child_process";

export interface StartedServer {
  /** The URL it printed, for messages. */
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
}

const started: StartedServer[] = [];

/** Called by `startServer` once the server is listening. */
export function registerServer(server: StartedServer): void {
  started.push(server);
}

/** The servers started so far, oldest first. */
export function startedServers(): readonly StartedServer[] {
  return started;
}
