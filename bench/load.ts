/**
 * Closed-loop load: `concurrency` clients each start a run, read it to its end and start the
 * next, until the window closes. The window opens `rampMs` after the first runs start, so the
 * burst of the first simultaneous starts is not what is measured; runs still going when it
 * closes are read to their end (up to `drainMs`) but count only what arrived inside it.
 */
import { setMaxListeners } from "node:events";
import http from "node:http";
import { nowUs } from "./clock.js";
import { streamPost, type StreamResult } from "./sse-client.js";
import type { Target } from "./targets.js";

export interface LoadWindow {
  concurrency: number;
  windowMs: number;
  runs: StreamResult[];
  /** Token frames received inside the window, per second. */
  tokensPerSec: number;
  /** Runs whose stream ended inside the window, per second. */
  runsPerSec: number;
  /** Time to first token of every run started inside the window, ms. */
  ttftMs: number[];
  errors: number;
  firstError?: string;
  /** Runs stopped by the client because they were still going `drainMs` after the window. */
  cut: number;
  /** CPU seconds used inside the window: `server` (the target's process group), `client` (this process), and any `watch`ed. */
  cpu: Record<string, number>;
}

export async function closedLoop(
  target: Target,
  concurrency: number,
  windowMs: number,
  message: () => string,
  o: {
    stamps?: boolean;
    watch?: Record<string, () => number>;
    drainMs?: number;
    rampMs?: number;
    /** Called when the window opens and when it closes (e.g. window-probes.ts). */
    onOpen?: () => void;
    onClose?: () => void;
  } = {},
): Promise<LoadWindow> {
  const read = cpuMeters(() => target.child.cpuSeconds(), o.watch);
  const ramp = o.rampMs ?? 0;
  let cpuStart = read();
  let cpuEnd: Record<string, number> | undefined;
  // Fresh connections per window: no socket left idle (or closed under us) by the last one.
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const start = nowUs() + ramp * 1000;
  const end = start + windowMs * 1000;
  const runs: StreamResult[] = [];
  let opened = false;
  const open = () => {
    if (opened) return;
    opened = true;
    cpuStart = read();
    o.onOpen?.();
  };
  const close = () => {
    if (cpuEnd) return;
    open();
    cpuEnd = read();
    o.onClose?.();
  };
  const openWindow = setTimeout(open, ramp);
  const closeWindow = setTimeout(close, ramp + windowMs);
  // Runs still going when the window closes are read to their end, but not forever.
  const cut = new AbortController();
  setMaxListeners(0, cut.signal); // one listener per stream in flight
  const stopDraining = setTimeout(() => cut.abort(), ramp + windowMs + (o.drainMs ?? 60_000));
  const client = async () => {
    while (nowUs() < end) {
      const req = target.streamRequest(message());
      runs.push(await streamPost(target.child.url + req.path, req.body, { agent, tokenEvent: target.tokenEvent, stamps: o.stamps, windowStartUs: start, windowEndUs: end, signal: cut.signal }));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  clearTimeout(openWindow);
  clearTimeout(closeWindow);
  clearTimeout(stopDraining);
  close();
  agent.destroy();
  return windowOf({ concurrency, windowMs, runs, start, end, cpuStart, cpuEnd: cpuEnd! });
}

/** Reads the CPU seconds used so far by the server, this process (the client) and whatever else `watch` names. */
export function cpuMeters(server: () => number, watch: Record<string, () => number> = {}): () => Record<string, number> {
  const meters: Record<string, () => number> = {
    server,
    client: () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    },
    ...watch,
  };
  return () => Object.fromEntries(Object.entries(meters).map(([k, f]) => [k, f()]));
}

/** A window's figures from its runs: what finished, streamed and failed inside [start, end], and the CPU each meter used. */
export function windowOf(o: {
  concurrency: number;
  windowMs: number;
  runs: StreamResult[];
  start: number;
  end: number;
  cpuStart: Record<string, number>;
  cpuEnd: Record<string, number>;
}): LoadWindow {
  const { concurrency, windowMs, runs, start, end } = o;
  const seconds = windowMs / 1000;
  const cutRuns = runs.filter((r) => r.error === "aborted");
  const failed = runs.filter((r) => r.error !== "aborted" && (r.error || r.firstTokenUs === null));
  return {
    concurrency,
    windowMs,
    runs,
    tokensPerSec: runs.reduce((n, r) => n + r.tokensInWindow, 0) / seconds,
    runsPerSec: runs.filter((r) => !r.error && r.endUs >= start && r.endUs <= end).length / seconds,
    ttftMs: runs.filter((r) => r.firstTokenUs !== null && r.startUs >= start).map((r) => (r.firstTokenUs! - r.startUs) / 1000),
    errors: failed.length,
    firstError: failed[0] ? (failed[0].error ?? "no token") : undefined,
    cut: cutRuns.length,
    cpu: Object.fromEntries(Object.keys(o.cpuStart).map((k) => [k, o.cpuEnd[k]! - o.cpuStart[k]!])),
  };
}

/**
 * Waits until the server is idle (under 5% of a core over 250 ms, at most `maxMs`), so work
 * left over from one window (runs being cancelled, logs being flushed) does not land in the next.
 */
export async function untilIdle(target: Target, maxMs = 20_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const before = target.child.cpuSeconds();
    await new Promise((r) => setTimeout(r, 250));
    if (target.child.cpuSeconds() - before < 0.0125) return;
  }
}
