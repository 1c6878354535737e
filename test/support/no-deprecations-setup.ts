/**
 * Vitest setup file of both projects: a test fails when a deprecation warning was printed while it
 * ran, by a server it started (`startServer`, any backend) or by this test process itself (pg used
 * in-process by the store tests). A deprecation is next major version's error: pg 9, for one,
 * refuses the queued queries pg 8 only warns about.
 *
 * Looked at after each test, and once more after the file's own `afterAll` (vitest runs after-hooks
 * in reverse order of registration; servers stopped there have printed everything by then). A
 * warning printed in a `beforeAll`, or late in one test, is reported by the next check; none is
 * missed. Only deprecations: any other warning is left to the suite that cares.
 */
import { once } from "node:events";
import { afterAll, afterEach } from "vitest";
import { type StartedServer, startedServers } from "../helpers/server-registry.js";

const WARNING_LINE = /^.*DeprecationWarning.*$/gm;
/** How long a server that has exited may take to hand over the rest of its stderr. */
const DRAIN_MS = 2_000;

/** How much of each server's stderr has been looked at already. */
const seen = new WeakMap<StartedServer, number>();
const inProcess: string[] = [];

process.on("warning", (w) => {
  if (w.name === "DeprecationWarning") inProcess.push(`${w.name}: ${w.message}`);
});

/**
 * Whether all the server will ever write is in `stderr()`: it has exited and the pipe is read to
 * its end. An exited server's last lines may still sit in the pipe; the wait is bounded, so a pipe
 * held open by something else cannot hang the check.
 */
async function drained(server: StartedServer): Promise<boolean> {
  const { child } = server;
  if (child.exitCode === null && child.signalCode === null) return false;
  if (!child.stderr || child.stderr.closed) return true;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), DRAIN_MS);
  const closed = await once(child.stderr, "close", { signal: ac.signal }).then(() => true, () => false);
  clearTimeout(timer);
  return closed;
}

/** The deprecation warnings printed since the last look, one line each, saying who printed them. */
async function newDeprecations(): Promise<string[]> {
  // Node emits 'warning' on a later tick than the code that warned: let a pending one land first.
  await new Promise((resolve) => setImmediate(resolve));
  const found = inProcess.splice(0).map((w) => `the test process: ${w}`);
  for (const server of startedServers()) {
    const complete = await drained(server);
    const text = server.stderr();
    const from = seen.get(server) ?? 0;
    // A line still being written is looked at once it is whole, or the two halves would both pass.
    const to = complete ? text.length : text.lastIndexOf("\n") + 1;
    if (to <= from) continue;
    seen.set(server, to);
    for (const line of text.slice(from, to).match(WARNING_LINE) ?? []) found.push(`server ${server.url} (pid ${server.child.pid}): ${line.trim()}`);
  }
  return found;
}

async function failOnDeprecations(): Promise<void> {
  const found = await newDeprecations();
  if (found.length) throw new Error(`deprecation warnings on stderr:\n${found.join("\n")}`);
}

afterEach(failOnDeprecations);
afterAll(failOnDeprecations);
