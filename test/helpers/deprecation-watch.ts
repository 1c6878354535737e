/**
 * Collects the deprecation warnings printed by the servers `startServer` started and by this
 * test process, for test/support/no-deprecations-setup.ts, which fails a test on any. A
 * deprecation is the next major version's error: pg 9, for one, refuses the queued queries pg 8
 * only warns about.
 */
import { once } from "node:events";
import { type StartedServer, startedServers } from "./server-registry.js";

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

/**
 * The deprecation warnings printed since the last call, one line each, saying who printed them.
 * A server's line still being written is left for the next call (it would pass in two halves);
 * a server that has exited is read to its end first.
 */
export async function newDeprecations(): Promise<string[]> {
  // Node emits 'warning' on a later tick than the code that warned: let a pending one land first.
  await new Promise((resolve) => setImmediate(resolve));
  const found = inProcess.splice(0).map((w) => `the test process: ${w}`);
  for (const server of startedServers()) {
    const complete = await drained(server);
    const text = server.stderr();
    const from = seen.get(server) ?? 0;
    const to = complete ? text.length : text.lastIndexOf("\n") + 1;
    if (to <= from) continue;
    seen.set(server, to);
    for (const line of text.slice(from, to).match(WARNING_LINE) ?? []) found.push(`server ${server.url} (pid ${server.child.pid}): ${line.trim()}`);
  }
  return found;
}
